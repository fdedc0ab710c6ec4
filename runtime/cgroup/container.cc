// The container's cgroup (see container.h). cgroup_relative_path, resource_files and
// needed_controllers are pure; the rest runs in the process of `kern oci create` / `update`.
#include "runtime/cgroup/container.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/cgroup/device_program.h"
#include "runtime/bundle/state_dir.h"
#include "runtime/cgroup/subtree.h"
#include "runtime/sys/fdio.h"

namespace kern::bundle {

namespace {

std::string join(const std::string& a, const std::string& b) {
  if (a.empty() || a == "/") return b[0] == '/' ? b : "/" + b;
  return a + (b[0] == '/' ? b : "/" + b);
}

std::string max_or(int64_t v) { return v < 0 ? "max" : std::to_string(v); }

}  // namespace

Result<std::string> cgroup_relative_path(const std::string& cgroups_path, const std::string& id,
                                         const std::string& self, bool systemd, bool root) {
  if (systemd && !cgroups_path.empty()) {
    size_t a = cgroups_path.find(':');
    size_t b = a == std::string::npos ? a : cgroups_path.find(':', a + 1);
    if (b == std::string::npos || cgroups_path.find(':', b + 1) != std::string::npos)
      return fail(ErrorKind::config, 0,
                  "linux.cgroupsPath \"" + cgroups_path + "\": with --systemd-cgroup it must be SLICE:PREFIX:NAME");
    std::string slice = cgroups_path.substr(0, a), prefix = cgroups_path.substr(a + 1, b - a - 1),
                name = cgroups_path.substr(b + 1);
    if (slice.empty()) slice = root ? "system.slice" : "user.slice";
    if (slice.size() < 7 || slice.compare(slice.size() - 6, 6, ".slice") != 0 || slice.find('/') != std::string::npos)
      return fail(ErrorKind::config, 0, "linux.cgroupsPath: \"" + slice + "\" is not a slice name");
    std::string path;
    std::string stem = slice.substr(0, slice.size() - 6);
    if (stem != "-") {
      // "a-b-c.slice" lives in a.slice/a-b.slice/a-b-c.slice.
      size_t pos = 0;
      for (;;) {
        size_t dash = stem.find('-', pos);
        path += "/" + stem.substr(0, dash) + ".slice";
        if (dash == std::string::npos) break;
        pos = dash + 1;
      }
    }
    std::string unit = (prefix.empty() ? "" : prefix + "-") + name + ".scope";
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".slice") == 0) unit = name;
    // A user's systemd manages the slices below its own user@UID.service.
    std::string base = root ? "" : self.substr(0, self.find(".service") == std::string::npos
                                                      ? 0
                                                      : self.find(".service") + 8);
    return base + path + "/" + unit;
  }
  if (cgroups_path.empty()) return root ? "/kern-oci/" + id : join(self, "kern-oci-" + id);
  if (cgroups_path[0] == '/') return cgroups_path;
  return join(self, cgroups_path);
}

std::vector<std::pair<std::string, std::string>> resource_files(const Resources& r) {
  std::vector<std::pair<std::string, std::string>> f;
  if (r.memory_reservation) f.emplace_back("memory.low", max_or(*r.memory_reservation));
  if (r.memory_limit) f.emplace_back("memory.max", max_or(*r.memory_limit));
  if (r.memory_swap) {
    // The specification's swap counts memory too: cgroup v2's swap.max is the rest.
    std::string v = "max";
    if (*r.memory_swap >= 0 && r.memory_limit && *r.memory_limit >= 0)
      v = std::to_string(std::max<int64_t>(0, *r.memory_swap - *r.memory_limit));
    f.emplace_back("memory.swap.max", v);
  }
  if (r.disable_oom_killer) f.emplace_back("memory.oom.group", "0");
  if (r.cpu_shares && *r.cpu_shares > 0) {
    uint64_t s = std::clamp<uint64_t>(*r.cpu_shares, 2, 262144);
    f.emplace_back("cpu.weight", std::to_string(1 + ((s - 2) * 9999) / 262142));
  }
  if (r.cpu_quota || r.cpu_period) {
    std::string q = r.cpu_quota && *r.cpu_quota > 0 ? std::to_string(*r.cpu_quota) : "max";
    f.emplace_back("cpu.max", q + " " + std::to_string(r.cpu_period.value_or(100000)));
  }
  if (r.cpu_idle) f.emplace_back("cpu.idle", std::to_string(*r.cpu_idle));
  if (!r.cpu_cpus.empty()) f.emplace_back("cpuset.cpus", r.cpu_cpus);
  if (!r.cpu_mems.empty()) f.emplace_back("cpuset.mems", r.cpu_mems);
  if (r.pids_limit) f.emplace_back("pids.max", *r.pids_limit <= 0 ? "max" : std::to_string(*r.pids_limit));
  if (r.io_weight && *r.io_weight > 0) {
    uint64_t w = std::clamp<uint64_t>(*r.io_weight, 10, 1000);
    f.emplace_back("io.weight", "default " + std::to_string(1 + ((w - 10) * 9999) / 990));
  }
  for (const auto& d : r.io_weight_device)
    if (d.weight)
      f.emplace_back("io.weight", std::to_string(d.major) + ":" + std::to_string(d.minor) + " " +
                                      std::to_string(1 + ((std::clamp<uint64_t>(*d.weight, 10, 1000) - 10) * 9999) / 990));
  auto throttle = [&](const std::vector<ThrottleDevice>& v, const char* key) {
    for (const auto& d : v)
      f.emplace_back("io.max", std::to_string(d.major) + ":" + std::to_string(d.minor) + " " + key + "=" +
                                   (d.rate == 0 ? "max" : std::to_string(d.rate)));
  };
  throttle(r.io_read_bps, "rbps");
  throttle(r.io_write_bps, "wbps");
  throttle(r.io_read_iops, "riops");
  throttle(r.io_write_iops, "wiops");
  for (const auto& [size, limit] : r.hugepage_limits) f.emplace_back("hugetlb." + size + ".max", std::to_string(limit));
  for (const auto& [k, v] : r.unified) f.emplace_back(k, v);
  return f;
}

std::vector<std::string> needed_controllers(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> out;
  for (const auto& [file, value] : files) {
    std::string c = file.substr(0, file.find('.'));
    if (c == "cgroup") continue;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

namespace {

// Enables `controllers` in every ancestor of `rel` below the mount (each must hand them down
// for the leaf to have them). Those a parent does not have are left out: their files then fail
// to be written and are reported so.
void enable_controllers(const std::string& mount, const std::string& rel, const std::vector<std::string>& controllers) {
  std::string at = mount;
  size_t pos = 1;
  while (pos < rel.size()) {
    std::string avail;
    (void)read_knob_file(AT_FDCWD, at + "/cgroup.controllers", &avail);
    std::vector<std::string> have = controller_list(avail);
    for (const auto& c : controllers)
      if (std::find(have.begin(), have.end(), c) != have.end())
        (void)sys::write_knob(AT_FDCWD, at + "/cgroup.subtree_control", "+" + c);
    size_t next = rel.find('/', pos);
    if (next == std::string::npos) break;
    at = mount + rel.substr(0, next);
    pos = next + 1;
  }
}

Status make_dirs(const std::string& mount, const std::string& rel, bool* created) {
  std::string at = mount;
  size_t pos = 1;
  *created = false;
  while (pos <= rel.size()) {
    size_t next = rel.find('/', pos);
    if (next == std::string::npos) next = rel.size();
    at = mount + rel.substr(0, next);
    if (::mkdir(at.c_str(), 0755) == 0) *created = next == rel.size();
    else if (errno != EEXIST) return fail_errno("mkdir \"" + at + "\"");
    pos = next + 1;
  }
  return {};
}

}  // namespace

namespace {

// The v1 controller a cgroup v2 controller's files stand for.
std::string v1_name(const std::string& v2) { return v2 == "io" ? "blkio" : v2; }

bool annotated_true(const Config& c, const char* key) {
  auto a = c.annotations.find(key);
  return a != c.annotations.end() && a->second == "true";
}

// Removes what make_container_cgroup made when it fails.
struct CgroupUndo {
  ContainerCgroup& cg;
  bool armed = true;
  ~CgroupUndo() {
    if (!armed) return;
    for (auto it = cg.v1_made.rbegin(); it != cg.v1_made.rend(); ++it) ::rmdir(it->c_str());
    if (cg.created) ::rmdir(cg.dir.c_str());
  }
};

}  // namespace

std::string knob_verdict_text(const KnobVerdict& v) {
  return v.verdict == Verdict::enforced ? v.value : "not enforced: " + v.why;
}

Result<ContainerCgroup> make_container_cgroup(const Config& c, const std::string& id, bool systemd, bool require) {
  ContainerCgroup cg;
  // Root of the host, not uid 0 of an engine's user namespace (rootless podman).
  const bool host_root = ::geteuid() == 0 && in_initial_user_namespace();
  const bool allow_uncapped = annotated_true(c, kAllowUncappedAnnotation);
  const Linux* l = c.linux_config ? &*c.linux_config : nullptr;
  Resources none;
  const Resources& res = l && l->resources ? *l->resources : none;
  auto files = resource_files(res);
  const std::string uncapped_hint =
      require ? "io.kern.require-limits is \"true\": kern refuses to run the container uncapped"
              : "annotate the container io.kern.allow-uncapped=true to run it without what cannot be enforced "
                "(`kern doctor` says what this host delegates)";
  auto uncapped = [&](const std::string& why) -> Result<ContainerCgroup> {
    if (require || host_root)
      return fail(Error(ErrorKind::host_unsupported, 0, "the container's cgroup: " + why)
                      .with_hint(require ? uncapped_hint
                                         : "as root, kern confines a container's device access with a cgroup v2 "
                                           "program and runs none without it"));
    if (!files.empty() && !allow_uncapped)
      return fail(Error(ErrorKind::host_unsupported, 0,
                        "linux.resources asks for " + files.front().first + " and the container can have no cgroup: " + why)
                      .with_hint(uncapped_hint));
    for (const auto& [file, value] : files) cg.enforced[file] = KnobVerdict::lost(why);
    cg.enforced["cgroup"] = KnobVerdict::lost(why);
    return std::move(cg);
  };
  // A cgroupsPath the configuration names is a demand, as with runc: rootless, where it cannot
  // be made the create fails (an engine that wants no cgroup leaves it out).
  const bool path_named = l && !l->cgroups_path.empty();
  auto named_path_refused = [&](const std::string& why) -> Result<ContainerCgroup> {
    return fail(Error(ErrorKind::host_unsupported, 0,
                      "unable to apply cgroup configuration: linux.cgroupsPath \"" + l->cgroups_path + "\": " + why)
                    .with_hint("rootless, a container gets its cgroupsPath only in a cgroup v2 subtree delegated to "
                               "this user; leave linux.cgroupsPath out, or annotate the container "
                               "io.kern.allow-uncapped=true to run it without a cgroup"));
  };
  auto host = probe_cgroup_host();
  if (!host || host->mount.empty()) {
    if (path_named && !host_root && !allow_uncapped) return named_path_refused("no cgroup v2 is mounted here");
    return uncapped("no cgroup v2 is mounted here");
  }
  auto rel = cgroup_relative_path(l ? l->cgroups_path : "", id, host->self.empty() ? "/" : host->self, systemd,
                                  host_root);
  if (!rel) return fail(std::move(rel).error());
  bool created = false;
  if (auto m = make_dirs(host->mount, *rel, &created); !m) {
    if (path_named && !host_root && !allow_uncapped) return named_path_refused(m.error().what());
    return uncapped(m.error().what());
  }
  cg.dir = host->mount + *rel;
  cg.created = created;
  CgroupUndo undo{cg};
  // As runc: a cgroup someone froze would freeze the container before it ran (refused); one
  // with processes is shared with them (said).
  auto frozen = sys::read_file(AT_FDCWD, cg.dir + "/cgroup.freeze", 64);
  if (frozen && frozen->compare(0, 1, "1") == 0)
    return fail(Error(ErrorKind::config, 0, "the container's cgroup unexpectedly frozen: \"" + cg.dir + "\"")
                    .with_hint("thaw it (echo 0 > cgroup.freeze) or give another linux.cgroupsPath"));
  if (auto procs = sys::read_file(AT_FDCWD, cg.dir + "/cgroup.procs", 1 << 20); procs && !procs->empty()) {
    size_t n = std::count(procs->begin(), procs->end(), '\n');
    cg.warnings.push_back("the container's cgroup is not empty: " + std::to_string(n) + " process(es) in \"" + cg.dir +
                          "\" already");
  }

  // Controllers cgroup v2 has here; as root, those it lacks are looked for on cgroup v1.
  std::string avail;
  (void)read_knob_file(AT_FDCWD, host->mount + "/cgroup.controllers", &avail);
  const std::vector<std::string> v2_has = controller_list(avail);
  auto on_v2 = [&](const std::string& ctl) { return std::find(v2_has.begin(), v2_has.end(), ctl) != v2_has.end(); };
  std::vector<V1Hierarchy> v1h;
  if (host_root) {
    auto mi = sys::read_file(AT_FDCWD, "/proc/self/mountinfo", 4 << 20);
    auto pc = sys::read_file(AT_FDCWD, "/proc/self/cgroup");
    if (mi && pc) v1h = v1_hierarchies(*mi, *pc);
  }
  auto on_v1 = [&](const std::string& v2ctl) {
    if (on_v2(v2ctl)) return false;
    std::string want = v1_name(v2ctl);
    return std::any_of(v1h.begin(), v1h.end(), [&](const V1Hierarchy& h) {
      return std::find(h.controllers.begin(), h.controllers.end(), want) != h.controllers.end();
    });
  };
  std::vector<std::pair<std::string, std::string>> v2_files;
  for (const auto& f : files)
    if (!on_v1(f.first.substr(0, f.first.find('.')))) v2_files.push_back(f);
  const bool strict = require || !allow_uncapped;
  auto refuse = [&](const std::string& file, const std::string& value, const Error& e) {
    return fail(Error(ErrorKind::host_unsupported, e.sys_errno(),
                      "linux.resources: " + file + " \"" + value + "\" cannot be put in force: " + e.what())
                    .with_hint(uncapped_hint));
  };

  enable_controllers(host->mount, *rel, needed_controllers(v2_files));
  int fd = ::open(cg.dir.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail_errno("open \"" + cg.dir + "\"");
  cg.fd.reset(fd);
  for (const auto& [file, value] : v2_files) {
    auto w = sys::write_knob(AT_FDCWD, cg.dir + "/" + file, value);
    if (!w) {
      if (strict) return refuse(cg.dir + "/" + file, value, w.error());
      cg.enforced[file] = KnobVerdict::lost(w.error().what());
      continue;
    }
    std::string back;
    (void)read_knob_file(AT_FDCWD, cg.dir + "/" + file, &back);
    while (!back.empty() && back.back() == '\n') back.pop_back();
    cg.enforced[file] = KnobVerdict::held(back);
  }
  cg.enforced["cgroup"] = KnobVerdict::held(cg.dir);

  // cgroup v1 (root, v1 or hybrid host): the container gets a directory in every hierarchy, as
  // with runc, so that its memory, pids, cpu and blkio are its own even when none is limited.
  if (std::any_of(files.begin(), files.end(), [&](const auto& f) { return on_v1(f.first.substr(0, f.first.find('.'))); }) ||
      (host_root && !v1h.empty() && !on_v2("memory") && !on_v2("pids"))) {
    auto rel_for = [&](const std::string& self) {
      return cgroup_relative_path(l ? l->cgroups_path : "", id, self, systemd, host_root);
    };
    KERN_TRY_ASSIGN(cg.v1, make_v1_dirs(v1h, rel_for, &cg.v1_made));
    if (std::string fz = v1_dir_for(cg.v1, "freezer"); !fz.empty()) {
      auto st = sys::read_file(AT_FDCWD, fz + "/freezer.state", 64);
      if (st && st->compare(0, 6, "FROZEN") == 0)
        return fail(Error(ErrorKind::config, 0, "the container's cgroup unexpectedly frozen: \"" + fz + "\"")
                        .with_hint("thaw it (echo THAWED > freezer.state) or give another linux.cgroupsPath"));
    }
    std::vector<std::string> ignored;
    KERN_TRY_ASSIGN(std::vector<V1Write> writes, v1_resource_writes(res, &ignored));
    std::erase_if(writes, [&](const V1Write& w) { return on_v2(w.controller == "blkio" ? "io" : w.controller); });
    auto applied = apply_v1_writes(cg.v1, writes);
    for (const auto& w : writes) {
      auto& r = applied.at(w.file);
      if (!r) {
        if (strict) return refuse(v1_dir_for(cg.v1, w.controller) + "/" + w.file, w.value, r.error());
        cg.enforced[w.file] = KnobVerdict::lost(r.error().what());
      } else {
        cg.enforced[w.file] = KnobVerdict::held(*r);
      }
    }
    for (const auto& f : ignored) cg.enforced[f] = KnobVerdict::lost("cgroup v1 kern leaves it alone");
    for (const auto& [ctl, dir] : cg.v1) cg.enforced["cgroup v1 " + ctl] = KnobVerdict::held(dir);
  }

  // Device access: always decided by kern's program when it can attach one (the configuration's
  // rules, then the default devices); a root container without it could mknod and open any
  // node of the host, so a failure as root is an error. Unprivileged, a user namespace can make
  // no device node and open only those bound in, and the kernel refuses the program anyway.
  auto rules = effective_device_rules(res.devices, l ? l->devices : std::vector<Device>{});
  auto dev = attach_device_program(cg.fd.get(), device_program(rules));
  if (dev) {
    cg.enforced["devices"] = KnobVerdict::held(std::to_string(rules.size()) + " rules (BPF_CGROUP_DEVICE)");
  } else if (host_root || require) {
    return fail(std::move(dev).error().with_context("linux.resources.devices"));
  } else {
    cg.enforced["devices"] = KnobVerdict::lost(dev.error().what());
  }
  undo.armed = false;
  return cg;
}

}  // namespace kern::bundle
