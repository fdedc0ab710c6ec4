// Profile tokens -> BoxSpec; see profile_apply.h for the precedence rules.
#include "cli/profile_apply.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "cli/io_limits.h"
#include "profiles/device_policy.h"
#include "profiles/profile_loader.h"
#include "profiles/profile_token.h"
#include "profiles/units.h"
#include "runtime/cgroup/box_cgroup.h"
#include "runtime/cgroup/enforcement.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {

using profiles::ProfileKind;
using profiles::ProfileSet;

Unexpected<Error> config_error(const std::string& msg) { return fail(ErrorKind::config, 0, msg); }

void plan(ProfileReport* r, const std::string& line) {
  if (r) r->plan.push_back(log::sanitize(line));
}

std::string names_of(const ProfileSet& set, ProfileKind k) {
  std::vector<std::string> names;
  if (k == ProfileKind::vcpu) for (const auto& p : set.vcpu) names.push_back(p.name);
  if (k == ProfileKind::vdisk) for (const auto& p : set.vdisk) names.push_back(p.name);
  if (k == ProfileKind::vgpio) for (const auto& p : set.vgpio) names.push_back(p.name);
  if (names.empty()) return "it defines no [[" + std::string(profiles::profile_kind_name(k)) + "]]";
  std::string out = "defined: ";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + log::sanitize(names[i]);
  return out;
}

// CPUs this host has online, from sysfs; empty when unknown.
std::vector<unsigned> online_cpus() {
  auto text = sys::read_file(AT_FDCWD, "/sys/devices/system/cpu/online", 4096);
  if (!text) return {};
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  auto list = profiles::parse_cpu_list(s);
  return list ? *list : std::vector<unsigned>{};
}

// The workload's own nice value is set with setpriority(2) before exec; raising it is always
// allowed, lowering it below the caller's needs CAP_SYS_NICE on the host (never held by a box)
// or RLIMIT_NICE. Said once here, before anything starts.
void warn_unreachable_nice(const std::string& token, int nice) {
  errno = 0;
  int current = ::getpriority(PRIO_PROCESS, 0);
  if (errno != 0 || nice >= current) return;
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NICE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && 20 - nice <= static_cast<int>(rl.rlim_cur))
    return;
  log::warning(token + ": nice " + std::to_string(nice) + ": the processes keep nice " + std::to_string(current) +
               " (lowering it needs CAP_SYS_NICE or RLIMIT_NICE on the host); the cgroup's cpu.weight.nice is " +
               std::to_string(nice) + " where the box gets a cgroup");
}

// The whole disk (major:minor) that holds `path` (a directory on it, or with `device`, a block
// node), for io.max, which the kernel takes for whole disks only: a partition is traced to its
// disk through /sys/dev/block. nullopt with why when there is no single block device (tmpfs,
// overlay, btrfs and network file systems have an anonymous device number).
struct WholeDisk {
  uint32_t major = 0, minor = 0;
  std::string why_not;
};

WholeDisk whole_disk_of(const profiles::DiskBackend& disk) {
  WholeDisk out;
  struct stat st;
  const std::string& what = disk.device.empty() ? disk.path : disk.device;
  if (::stat(what.c_str(), &st) != 0) {
    out.why_not = "stat " + log::quoted(what) + ": " + std::string(std::strerror(errno));
    return out;
  }
  dev_t dev = disk.device.empty() ? st.st_dev : st.st_rdev;
  if (!disk.device.empty() && !S_ISBLK(st.st_mode)) {
    out.why_not = log::quoted(what) + " is not a block device";
    return out;
  }
  if (::major(dev) == 0) {
    out.why_not = log::quoted(what) + " is on a file system without a single block device (tmpfs, overlay, btrfs or a network file system)";
    return out;
  }
  if (std::string node = partition_node("/sys", ::major(dev), ::minor(dev)); !node.empty()) {
    auto parent = sys::read_file(AT_FDCWD, node + "/../dev", 64);  // the disk's own "MAJ:MIN"
    unsigned ma = 0, mi = 0;
    if (!parent || std::sscanf(parent->c_str(), "%u:%u", &ma, &mi) != 2) {
      out.why_not = "the disk of partition " + std::to_string(::major(dev)) + ":" + std::to_string(::minor(dev)) +
                    " cannot be found in /sys/dev/block";
      return out;
    }
    out.major = ma;
    out.minor = mi;
    return out;
  }
  out.major = ::major(dev);
  out.minor = ::minor(dev);
  return out;
}

// A vdisk's iops and bandwidth (else its disk's) as io.max of the disk's device. A value a flag
// already set for that device wins, as does an earlier token.
void apply_vdisk_io(const profiles::VdiskProfile& p, const profiles::DiskBackend& disk, const std::string& token,
                    BoxSpec& spec, ProfileReport* report) {
  std::optional<uint64_t> iops = p.iops ? p.iops : disk.iops;
  std::optional<uint64_t> bps = p.bandwidth ? p.bandwidth : disk.bandwidth;
  if (!iops && !bps) return;
  WholeDisk d = whole_disk_of(disk);
  if (!d.why_not.empty()) {
    log::warning(token + ": iops/bandwidth are not applied: " + d.why_not);
    plan(report, token + ": io.max NOT applied: " + d.why_not);
    return;
  }
  IoThrottle* t = &io_entry(spec.limits.io_max, d.major, d.minor, disk.device.empty() ? disk.path : disk.device);
  auto fill = [](uint64_t& slot, const std::optional<uint64_t>& v) {
    if (slot == 0 && v) slot = *v;
  };
  fill(t->riops, iops);
  fill(t->wiops, iops);
  fill(t->rbps, bps);
  fill(t->wbps, bps);
  plan(report, token + ": io.max " + std::to_string(t->major) + ":" + std::to_string(t->minor) +
                   " riops=" + std::to_string(t->riops) + " wiops=" + std::to_string(t->wiops) +
                   " rbps=" + std::to_string(t->rbps) + " wbps=" + std::to_string(t->wbps));
}

// The first vcpu: token to set a field wins; explicit flags beat every profile.
class VcpuMerge {
 public:
  VcpuMerge(BoxSpec& spec, const ExplicitFlags& ex, ProfileReport* report)
      : spec_(spec), ex_(ex), report_(report) {}

  template <typename T>
  void set(const std::string& field, const std::string& token, bool explicit_flag, const char* flag,
           std::optional<T>& slot, const T& value, const std::string& shown) {
    if (explicit_flag) {
      log::note(std::string(flag) + " overrides " + field + " " + shown + " of " + token);
      plan(report_, token + ": " + field + " " + shown + " (overridden by " + flag + ")");
      return;
    }
    auto it = first_.find(field);
    if (it != first_.end()) {
      if (!(slot && *slot == value))
        log::warning(token + ": " + field + " " + shown + " is ignored: " + it->second + " set it first");
      return;
    }
    first_[field] = token;
    slot = value;
    plan(report_, token + ": " + field + " " + shown);
  }

  void set_cpuset(const std::string& token, const std::string& cpus, const std::string& mems,
                  const std::string& shown) {
    if (ex_.cpuset) {
      log::note("--cpuset-cpus overrides cpuset " + shown + " of " + token);
      plan(report_, token + ": cpuset " + shown + " (overridden by --cpuset-cpus)");
      return;
    }
    auto it = first_.find("cpuset");
    if (it != first_.end()) {
      if (spec_.limits.cpuset_cpus != cpus || spec_.limits.cpuset_mems != mems)
        log::warning(token + ": cpuset " + shown + " is ignored: " + it->second + " set it first");
      return;
    }
    first_["cpuset"] = token;
    spec_.limits.cpuset_cpus = cpus;
    spec_.limits.cpuset_mems = mems;
    plan(report_, token + ": cpuset " + shown);
  }

 private:
  BoxSpec& spec_;
  const ExplicitFlags& ex_;
  ProfileReport* report_;
  std::map<std::string, std::string> first_;
};

Status apply_vcpu(const profiles::VcpuProfile& p, const std::string& token, const ProfileSet& set,
                  BoxSpec& spec, VcpuMerge& merge) {
  Limits& l = spec.limits;
  if (p.memory)
    merge.set<uint64_t>("memory", token, false, "", l.memory_max, *p.memory, profiles::format_size(*p.memory));
  if (p.cpus)
    merge.set<double>("cpus", token, false, "", l.cpus, *p.cpus, profiles::format_cpus(*p.cpus));
  if (p.nice) {
    merge.set<int>("nice", token, false, "", l.nice, *p.nice, std::to_string(*p.nice));
    if (l.nice == p.nice) warn_unreachable_nice(token, *p.nice);
  }
  if (!p.cpuset.empty()) {
    auto list = profiles::parse_cpu_list(p.cpuset);
    if (!list) return config_error(token + ": cpuset: " + list.error().message());
    auto online = online_cpus();
    if (!online.empty() && !std::includes(online.begin(), online.end(), list->begin(), list->end()))
      return config_error(token + ": cpuset " + log::quoted(p.cpuset) + " (" + set.where(p.at.of("cpuset")) +
                          ") names CPUs this host does not have online (" +
                          profiles::format_cpu_list(online) + ")");
    merge.set_cpuset(token, profiles::format_cpu_list(*list), "", log::quoted(p.cpuset));
  }
  if (p.numa) {
    std::string node = std::to_string(*p.numa);
    auto cpus = sys::read_file(AT_FDCWD, "/sys/devices/system/node/node" + node + "/cpulist", 4096);
    if (!cpus)
      return config_error(token + ": numa " + node + " (" + set.where(p.at.of("numa")) +
                          "): this host has no NUMA node " + node);
    std::string c = *cpus;
    while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
    merge.set_cpuset(token, c, node, "numa node " + node + " (cpus " + c + ")");
  }
  return {};
}

bool dest_taken(const BoxSpec& spec, const std::string& dest) {
  for (const auto& t : spec.tmpfs)
    if (t.dest == dest) return true;
  for (const auto& b : spec.binds)
    if (b.dest == dest) return true;
  return false;
}

Status apply_vdisk(const profiles::VdiskProfile& p, const std::string& token, const ProfileSet& set,
                   BoxSpec& spec, ProfileReport* report) {
  std::string dest = "/vdisk/" + p.name;
  if (dest_taken(spec, dest)) {
    log::note(token + ": " + dest + " is already mounted by a flag; the flag wins");
    plan(report, token + ": " + dest + " (overridden by a flag)");
    return {};
  }
  std::string size = profiles::format_size(p.size);
  if (p.backend == "ram") {
    spec.tmpfs.push_back(TmpfsMount{dest, p.size, token});
    uint64_t mem = spec.limits.memory_max.value_or(kDefaultMemoryMax);
    std::string cap = profiles::format_size(mem) + (spec.limits.memory_max ? "" : " by default");
    log::note(token + ": the " + size + " tmpfs at " + dest + " counts against the box's memory (" + cap + ")" +
              (p.size >= mem ? "; it cannot fill up before the box is out of memory" : ""));
    plan(report, token + ": tmpfs " + dest + " size=" + size + " (in RAM: counts against memory.max)");
    return {};
  }
  const profiles::DiskBackend* disk = p.backend.empty() ? set.default_disk() : set.find_disk(p.backend);
  if (!disk) return config_error(token + ": backend " + log::quoted(p.backend) + " is not defined");
  struct stat st;
  if (::stat(disk->path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return config_error(token + ": the directory of " + log::quoted(disk->id) + " (" + log::quoted(disk->path) + ", " +
                        set.where(disk->at.of("path")) + ") does not exist");
  BindMount b;
  b.dest = dest;
  b.origin = token;
  if (p.persistent.value_or(false)) {
    // One directory per user and profile, kept between boxes (boxes of the profile running at
    // the same time share it, as a named volume).
    b.source = disk->path + "/kern-" + std::to_string(::getuid()) + "-persistent-" + p.name;
    b.create_missing = true;
    spec.binds.push_back(b);
    log::warning(token + ": the size " + size + " on " + log::sanitize(disk->id) +
                 " is not enforced: an unprivileged user cannot mount a size-capped file system on a disk; "
                 "the box writes to " + log::sanitize(b.source) + ", which is kept (persistent = true)");
    plan(report, token + ": " + dest + " -> persistent directory " + b.source + " (size " + size +
                     " NOT enforced: no unprivileged size-capped file system on a disk)");
    apply_vdisk_io(p, *disk, token, spec, report);
    return {};
  }
  b.source = disk->path + "/kern-" + std::to_string(::getuid()) + "-" + std::to_string(::getpid()) + "-" + p.name;
  b.ephemeral = true;
  spec.binds.push_back(b);
  log::warning(token + ": the size " + size + " on " + log::sanitize(disk->id) +
               " is not enforced: an unprivileged user cannot mount a size-capped file system on a disk "
               "(that needs root: a loop-mounted image or project quotas); the box writes to a plain "
               "directory there, removed when it exits");
  plan(report, token + ": " + dest + " -> fresh directory " + b.source + " (size " + size +
                   " NOT enforced: no unprivileged size-capped file system on a disk)");
  apply_vdisk_io(p, *disk, token, spec, report);
  return {};
}

Status apply_vgpio(const profiles::VgpioProfile& p, const std::string& token, const ProfileSet& set,
                   BoxSpec& spec, ProfileReport* report) {
  using profiles::DeviceClass;
  for (DeviceClass dc : profiles::kDeviceClasses) {
    for (const auto& e : p.entries(dc)) {
      if (profiles::names_no_device_node(dc, e.text)) {
        plan(report, token + ": " + std::string(device_class_key(dc)) + " " + e.text + ": no device node (not granted)");
        continue;
      }
      auto path = profiles::resolve_device_entry(dc, e.text);
      if (!path) return config_error(token + ": " + set.where(e.at) + ": " + path.error().message());
      bool dup = std::any_of(spec.devices.begin(), spec.devices.end(),
                             [&](const DeviceGrant& g) { return g.box_path == *path; });
      if (dup) continue;
      profiles::DeviceIdentity id = profiles::inspect_device(*path);
      if (!id.exists) {
        log::warning(token + ": " + *path + " (" + set.where(e.at) + ") does not exist on this host: skipped");
        plan(report, token + ": " + *path + " missing on this host: skipped");
        continue;
      }
      if (auto why = profiles::refusal_reason(id))
        return config_error(token + ": " + set.where(e.at) + ": " + log::quoted(*path) + " (" +
                            profiles::describe_identity(id) + ") is refused: " + *why);
      DeviceGrant g;
      g.host_path = *path;
      g.box_path = *path;
      g.origin = token;
      g.rdev = static_cast<uint64_t>(::makedev(id.major, id.minor));
      spec.devices.push_back(g);
      plan(report, token + ": device " + *path + " (" + profiles::describe_identity(id) + ")");
    }
  }
  return {};
}

// [kern] warn_uncapped for runtime/cgroup/box_cgroup.h's DefaultCapsWarning: the file is read only when a
// box gets no cgroup and asked for no cap, at most once. A file that cannot be read or has
// errors keeps the warning.
DefaultCapsWarning default_caps_warning_from(const std::string& config_path) {
  auto known = std::make_shared<std::optional<bool>>();
  return [config_path, known] {
    if (!*known) {
      auto set = load_profile_set(config_path);
      *known = set ? set->kern.warn_uncapped.value_or(true) : true;
    }
    return **known;
  };
}

}  // namespace

Result<ProfileSet> load_profile_set(const std::string& config_path) {
  if (!config_path.empty()) return profiles::load_profiles(config_path, false);
  return profiles::load_profiles(paths::config_file(), true);
}

Status apply_profiles(const std::vector<std::string>& tokens, const ProfileSet& set, BoxSpec& spec,
                      const ExplicitFlags& explicit_flags, ProfileReport* report) {
  // Explicit flags already sit in spec.limits; a profile never writes over them.
  VcpuMerge merge(spec, explicit_flags, report);
  std::vector<std::string> seen;
  for (const std::string& word : tokens) {
    KERN_TRY_ASSIGN(profiles::ProfileToken t, profiles::parse_profile_token(word));
    std::string token = std::string(profiles::profile_kind_name(t.kind)) + ":" + t.name;
    if (std::find(seen.begin(), seen.end(), token) != seen.end()) continue;
    seen.push_back(token);
    auto missing = [&] {
      return config_error("profile token " + log::quoted(word) + ": no [[" + std::string(profiles::profile_kind_name(t.kind)) +
                          "]] named " + log::quoted(t.name) + " in " + set.where({}) + " (" + names_of(set, t.kind) + ")");
    };
    switch (t.kind) {
      case ProfileKind::vcpu: {
        const auto* p = set.find_vcpu(t.name);
        if (!p) return missing();
        // Explicit flags: recorded as overrides, never applied from the profile.
        if (explicit_flags.memory && p->memory)
          merge.set<uint64_t>("memory", token, true, "--memory", spec.limits.memory_max, *p->memory,
                              profiles::format_size(*p->memory));
        if (explicit_flags.cpus && p->cpus)
          merge.set<double>("cpus", token, true, "--cpus", spec.limits.cpus, *p->cpus, profiles::format_cpus(*p->cpus));
        if (explicit_flags.nice && p->nice)
          merge.set<int>("nice", token, true, "--nice", spec.limits.nice, *p->nice, std::to_string(*p->nice));
        profiles::VcpuProfile rest = *p;
        if (explicit_flags.memory) rest.memory.reset();
        if (explicit_flags.cpus) rest.cpus.reset();
        if (explicit_flags.nice) rest.nice.reset();
        KERN_TRY(apply_vcpu(rest, token, set, spec, merge));
        break;
      }
      case ProfileKind::vdisk: {
        const auto* p = set.find_vdisk(t.name);
        if (!p) return missing();
        KERN_TRY(apply_vdisk(*p, token, set, spec, report));
        break;
      }
      case ProfileKind::vgpio: {
        const auto* p = set.find_vgpio(t.name);
        if (!p) return missing();
        KERN_TRY(apply_vgpio(*p, token, set, spec, report));
        break;
      }
    }
  }
  return {};
}

Status apply_profiles(const std::vector<std::string>& tokens, const std::string& config_path, BoxSpec& spec,
                      const ExplicitFlags& explicit_flags, ProfileReport* report) {
  spec.default_caps_warning = default_caps_warning_from(config_path);
  if (tokens.empty()) return {};
  // Malformed tokens are reported before the file is read: the token is the first thing wrong.
  for (const auto& t : tokens) KERN_TRY(profiles::parse_profile_token(t));
  KERN_TRY_ASSIGN(ProfileSet set, load_profile_set(config_path));
  // Known now, without a second read.
  spec.default_caps_warning = [warn = set.kern.warn_uncapped.value_or(true)] { return warn; };
  return apply_profiles(tokens, set, spec, explicit_flags, report);
}

}  // namespace kern::cli
