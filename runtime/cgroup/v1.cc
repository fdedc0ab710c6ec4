// cgroup v1 for a root container on a v1 or hybrid host (see v1.h).
#include "runtime/cgroup/v1.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/cgroup/subtree.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/mountinfo.h"

namespace kern::bundle {

namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t next = s.find(sep, pos);
    if (next == std::string_view::npos) next = s.size();
    out.emplace_back(s.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string dev(int64_t major, int64_t minor) { return std::to_string(major) + ":" + std::to_string(minor); }

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::vector<V1Hierarchy> v1_hierarchies(std::string_view mountinfo, std::string_view proc_cgroup) {
  struct Mount {
    std::vector<std::string> options;
    std::string point, root;
  };
  std::vector<Mount> mounts;
  std::vector<sys::MountInfo> all = sys::parse_mountinfo(mountinfo);
  // A hierarchy that a later mount covers (a cgroup2 mounted at /sys/fs/cgroup in a namespace
  // of the caller's, over the host's v1 tree) cannot be reached at its path: it is not one.
  auto covered = [&](size_t i) {
    const std::string& p = all[i].point;
    for (size_t j = i + 1; j < all.size(); ++j) {
      const std::string& q = all[j].point;
      if (q == p || (p.size() > q.size() && p.compare(0, q.size(), q) == 0 && p[q.size()] == '/')) return true;
    }
    return false;
  };
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].type == "cgroup" && !covered(i)) mounts.push_back({split(all[i].super_options, ','), all[i].point, all[i].root});
  std::vector<V1Hierarchy> out;
  for (const auto& line : split(proc_cgroup, '\n')) {
    // "ID:CONTROLLERS:PATH"; the v2 line has no controllers.
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos || b == a + 1) continue;
    std::vector<std::string> ctl = split(std::string_view(line).substr(a + 1, b - a - 1), ',');
    std::string path = line.substr(b + 1);
    for (const auto& m : mounts) {
      if (!std::all_of(ctl.begin(), ctl.end(), [&](const std::string& c) { return has(m.options, c); })) continue;
      // Inside a cgroup namespace or a bind of a subtree, the mount's root is a prefix of PATH.
      std::string self = path;
      if (m.root != "/" && self.compare(0, m.root.size(), m.root) == 0) self = self.substr(m.root.size());
      if (self.empty()) self = "/";
      out.push_back({ctl, m.point, self});
      break;
    }
  }
  return out;
}

Result<std::vector<V1Write>> v1_resource_writes(const Resources& r, std::vector<std::string>* ignored) {
  auto refused = [](const std::string& what) { return Error(ErrorKind::config, 0, "resources." + what); };
  auto note = [&](const char* what) {
    if (ignored) ignored->push_back(what);
  };
  std::vector<V1Write> w;
  auto add = [&](const char* ctl, std::string file, std::string value) {
    w.push_back({ctl, std::move(file), std::move(value)});
  };
  // v1 takes -1 for "no limit"; the specification's swap is memory plus swap, as memsw is.
  // As runc: lifting the memory limit without a word on swap lifts memory plus swap too (first:
  // the kernel keeps memory at or below memory plus swap).
  if (r.memory_limit && *r.memory_limit == -1 && !r.memory_swap)
    w.push_back({"memory", "memory.memsw.limit_in_bytes", "-1", true});
  if (r.memory_limit) add("memory", "memory.limit_in_bytes", std::to_string(*r.memory_limit));
  if (r.memory_swap) add("memory", "memory.memsw.limit_in_bytes", std::to_string(*r.memory_swap));
  if (r.memory_reservation) add("memory", "memory.soft_limit_in_bytes", std::to_string(*r.memory_reservation));
  if (r.memory_kernel) note("memory.kernel");
  if (r.memory_kernel_tcp) note("memory.kernelTCP");
  if (r.memory_swappiness && *r.memory_swappiness <= 100)
    add("memory", "memory.swappiness", std::to_string(*r.memory_swappiness));
  if (r.disable_oom_killer) add("memory", "memory.oom_control", "1");

  if (r.cpu_shares && *r.cpu_shares > 0) add("cpu", "cpu.shares", std::to_string(*r.cpu_shares));
  if (r.cpu_period && *r.cpu_period > 0) add("cpu", "cpu.cfs_period_us", std::to_string(*r.cpu_period));
  if (r.cpu_quota && *r.cpu_quota != 0) add("cpu", "cpu.cfs_quota_us", std::to_string(*r.cpu_quota < 0 ? -1 : *r.cpu_quota));
  if (r.cpu_burst) add("cpu", "cpu.cfs_burst_us", std::to_string(*r.cpu_burst));
  if (r.cpu_realtime_period && *r.cpu_realtime_period > 0)
    add("cpu", "cpu.rt_period_us", std::to_string(*r.cpu_realtime_period));
  if (r.cpu_realtime_runtime && *r.cpu_realtime_runtime != 0)
    add("cpu", "cpu.rt_runtime_us", std::to_string(*r.cpu_realtime_runtime));
  if (r.cpu_idle) add("cpu", "cpu.idle", std::to_string(*r.cpu_idle));
  if (!r.cpu_cpus.empty()) add("cpuset", "cpuset.cpus", r.cpu_cpus);
  if (!r.cpu_mems.empty()) add("cpuset", "cpuset.mems", r.cpu_mems);

  // runc's reading: 0 leaves the limit as it is, a negative one lifts it.
  if (r.pids_limit && *r.pids_limit != 0) add("pids", "pids.max", *r.pids_limit < 0 ? "max" : std::to_string(*r.pids_limit));

  if (r.io_weight && *r.io_weight > 0) add("blkio", "blkio.weight", std::to_string(*r.io_weight));
  if (r.io_leaf_weight && *r.io_leaf_weight > 0) add("blkio", "blkio.leaf_weight", std::to_string(*r.io_leaf_weight));
  for (const auto& d : r.io_weight_device)
    if (d.weight) add("blkio", "blkio.weight_device", dev(d.major, d.minor) + " " + std::to_string(*d.weight));
  auto throttle = [&](const std::vector<ThrottleDevice>& list, const char* file) {
    for (const auto& d : list) add("blkio", file, dev(d.major, d.minor) + " " + std::to_string(d.rate));
  };
  throttle(r.io_read_bps, "blkio.throttle.read_bps_device");
  throttle(r.io_write_bps, "blkio.throttle.write_bps_device");
  throttle(r.io_read_iops, "blkio.throttle.read_iops_device");
  throttle(r.io_write_iops, "blkio.throttle.write_iops_device");

  for (const auto& [size, limit] : r.hugepage_limits) {
    if (size.empty() || size.find('/') != std::string::npos || size.find("..") != std::string::npos)
      return fail(refused("hugepageLimits: page size \"" + size + "\" is not a page size"));
    add("hugetlb", "hugetlb." + size + ".limit_in_bytes", std::to_string(limit));
  }
  if (!r.unified.empty())
    return fail(refused("unified: an invalid configuration on this host: it names cgroup v2 files, and the "
                        "controllers here are on cgroup v1"));
  if (r.has_network) return fail(refused("network: kern sets no net_cls/net_prio limits"));
  if (r.has_rdma) return fail(refused("rdma: kern sets no rdma limits"));
  return w;
}

std::vector<std::string> hierarchy_controllers(const std::string& key) { return split(key, ','); }

std::string v1_dir_for(const V1Dirs& dirs, const std::string& controller) {
  for (const auto& [ctl, dir] : dirs)
    if (has(hierarchy_controllers(ctl), controller)) return dir;
  return {};
}

Result<V1Dirs> make_v1_dirs(const std::vector<V1Hierarchy>& hs,
                            const std::function<Result<std::string>(const std::string&)>& rel_for,
                            std::vector<std::string>* made) {
  V1Dirs dirs;
  for (const auto& h : hs) {
    KERN_TRY_ASSIGN(std::string rel, rel_for(h.self));
    bool cpuset = has(h.controllers, "cpuset");
    std::string at = h.mount;
    for (const auto& part : split(rel, '/')) {
      if (part.empty()) continue;
      std::string parent = at;
      at += "/" + part;
      if (::mkdir(at.c_str(), 0755) == 0) made->push_back(at);
      else if (errno != EEXIST) return fail_errno("mkdir \"" + at + "\" (cgroup v1 " + joined(h.controllers) + ")");
      if (cpuset) {
        // An empty cpuset admits no process: one without cpus or mems (made here, or by
        // someone else, as a pod's parent) gets its parent's, as runc does.
        for (const char* f : {"cpuset.cpus", "cpuset.mems"}) {
          std::string mine, theirs;
          (void)read_knob_file(AT_FDCWD, at + "/" + f, &mine);
          if (!trimmed(mine).empty()) continue;
          (void)read_knob_file(AT_FDCWD, parent + "/" + f, &theirs);
          KERN_TRY(sys::write_knob(AT_FDCWD, at + "/" + f, trimmed(theirs)));
        }
      }
    }
    dirs[joined(h.controllers)] = at;
  }
  return dirs;
}

namespace {

// The file a write goes to on this host: a kernel whose block devices all use BFQ has no
// blkio.weight, only BFQ's blkio.bfq.weight (runc looks the same way).
std::string host_file(const std::string& dir, const std::string& file) {
  if (file != "blkio.weight" && file != "blkio.weight_device") return file;
  if (::access((dir + "/blkio.weight").c_str(), F_OK) == 0) return file;
  return file == "blkio.weight" ? "blkio.bfq.weight" : "blkio.bfq.weight_device";
}

}  // namespace

std::map<std::string, Result<std::string>> apply_v1_writes(const V1Dirs& dirs, const std::vector<V1Write>& writes) {
  std::map<std::string, Result<std::string>> out;
  std::vector<const V1Write*> again;
  auto write = [&](const V1Write& w) -> Status {
    std::string dir = v1_dir_for(dirs, w.controller);
    if (dir.empty())
      return fail(ErrorKind::host_unsupported, 0, "no cgroup v1 hierarchy of " + w.controller + " is mounted here");
    if (w.if_present && ::access((dir + "/" + w.file).c_str(), F_OK) != 0) return Status{};
    return sys::write_knob(AT_FDCWD, dir + "/" + host_file(dir, w.file), w.value);
  };
  auto record = [&](const V1Write& w, Status s) {
    if (!s) {
      out.insert_or_assign(w.file, Result<std::string>(fail(std::move(s).error())));
      return;
    }
    std::string dir = v1_dir_for(dirs, w.controller), back;
    (void)read_knob_file(AT_FDCWD, dir + "/" + host_file(dir, w.file), &back);
    out.insert_or_assign(w.file, Result<std::string>(trimmed(back)));
  };
  for (const auto& w : writes) {
    Status s = write(w);
    if (!s && s.error().sys_errno() == EINVAL) {
      again.push_back(&w);
      continue;
    }
    record(w, std::move(s));
  }
  for (const V1Write* w : again) record(*w, write(*w));
  return out;
}

Status sub_cgroups(const std::vector<std::string>& specs, std::string* v2, V1Dirs* v1) {
  for (const auto& spec : specs) {
    size_t colon = spec.rfind(':');
    std::string path = colon == std::string::npos ? spec : spec.substr(colon + 1);
    std::vector<std::string> ctls = colon == std::string::npos ? std::vector<std::string>{} : split(spec.substr(0, colon), ',');
    // Clean PATH: "." and empty parts go; ".." is never allowed (no way out of the container's).
    std::string clean;
    for (const auto& part : split(path, '/')) {
      if (part.empty() || part == ".") continue;
      if (part == "..")
        return fail(Error(ErrorKind::usage, 0, "--cgroup \"" + spec + "\": .. is not a sub cgroup path")
                        .with_hint("give a path below the container's cgroup (\"/\" is the container's own)"));
      clean += "/" + part;
    }
    if (ctls.empty()) {
      if (!v2->empty()) *v2 += clean;
      for (auto& [h, dir] : *v1) dir += clean;
      continue;
    }
    if (v1->empty())
      return fail(Error(ErrorKind::usage, 0, "--cgroup \"" + spec + "\": the container is on cgroup v2 alone")
                      .with_hint("give the path alone (cgroup v2 has one hierarchy)"));
    std::vector<std::string> hit;  // each hierarchy once ("cpu,cpuacct:X" names one twice)
    for (const auto& c : ctls) {
      bool found = false;
      for (const auto& [h, dir] : *v1)
        if (has(hierarchy_controllers(h), c)) {
          found = true;
          if (!has(hit, h)) hit.push_back(h);
        }
      if (!found) return fail(ErrorKind::usage, 0, "--cgroup \"" + spec + "\": unknown controller \"" + c + "\"");
    }
    for (const auto& h : hit) (*v1)[h] += clean;
  }
  return {};
}

Status join_v1_dirs(const V1Dirs& dirs, pid_t pid) {
  for (const auto& [ctl, dir] : dirs) {
    auto s = sys::write_knob(AT_FDCWD, dir + "/cgroup.procs", std::to_string(pid));
    if (!s) return fail(std::move(s).error().with_context("joining cgroup v1 " + ctl));
  }
  return {};
}

}  // namespace kern::bundle
