// plan_oci_root (pure) and open_bind_sources: the create verb's process, before the clone (see
// oci_root.h). The child's half, build_oci_root, is in oci_root.cc.
#include "runtime/bundle/oci_root.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kern::bundle {

namespace {

unsigned long propagation_of(const std::string& p) {
  if (p == "shared" || p == "rshared") return MS_SHARED | MS_REC;
  if (p == "slave" || p == "rslave") return MS_SLAVE | MS_REC;
  if (p == "unbindable" || p == "runbindable") return MS_UNBINDABLE | MS_REC;
  if (p == "private" || p == "rprivate") return MS_PRIVATE | MS_REC;
  return 0;
}

// The nodes every container has (runtime-spec "Default Devices").
const OciDevice kDefaults[] = {
    {"/dev/null", 'c', 1, 3},  {"/dev/zero", 'c', 1, 5},    {"/dev/full", 'c', 1, 7},
    {"/dev/random", 'c', 1, 8}, {"/dev/urandom", 'c', 1, 9}, {"/dev/tty", 'c', 5, 0},
};

}  // namespace

std::vector<UniqueFd> open_bind_sources(OciRoot& r) {
  std::vector<UniqueFd> held;
  for (auto& m : r.mounts) {
    if (!m.options.bind || m.source.empty()) continue;
    unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m.options.recursive_bind ? AT_RECURSIVE : 0);
    int fd = static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, m.source.c_str(), flags));
    if (fd < 0) continue;
    m.source_fd = fd;
    held.emplace_back(fd);
  }
  return held;
}

OciRoot plan_oci_root(const Config& c, const std::string& bundle_dir, const std::string& root_path,
                      bool in_userns, bool no_pivot) {
  OciRoot r;
  r.root_path = root_path;
  r.no_pivot = no_pivot;
  r.pause_before_pivot = !c.hooks.prestart.empty() || !c.hooks.create_runtime.empty() || !c.hooks.create_container.empty();
  r.steps = plan_oci_mounts(c);
  for (const auto& m : c.mounts) {
    OciMount om;
    om.destination = m.destination;
    om.type = m.type;
    om.options = parse_mount_options(m.options);
    if (om.type == "bind" || om.type == "rbind") {
      om.options.bind = true;
      om.options.recursive_bind = om.options.recursive_bind || om.type == "rbind";
    }
    om.source = m.source;
    if (om.options.bind && !om.source.empty() && om.source[0] != '/') om.source = bundle_dir + "/" + om.source;
    std::string dest = om.destination;
    while (dest.size() > 1 && dest.back() == '/') dest.pop_back();
    if (dest == "/dev" && !om.options.bind && (om.options.flags & MS_RDONLY))
      r.readonly_dev = static_cast<int>(r.mounts.size());
    r.mounts.push_back(std::move(om));
  }
  for (OciDevice d : kDefaults) {
    d.bind_from_host = in_userns;
    r.devices.push_back(d);
  }
  r.default_devices = r.devices.size();
  std::string propagation;
  if (c.linux_config) {
    const Linux& l = *c.linux_config;
    for (const auto& d : l.devices) {
      OciDevice od;
      od.path = d.path;
      od.type = d.type[0];
      od.major = static_cast<unsigned>(d.major.value_or(0));
      od.minor = static_cast<unsigned>(d.minor.value_or(0));
      od.mode = d.file_mode.value_or(0666);
      od.uid = d.uid.value_or(0);
      od.gid = d.gid.value_or(0);
      od.bind_from_host = in_userns;
      od.keep_ptmx_link = d.path == "/dev/ptmx";
      r.devices.push_back(od);
    }
    r.readonly_paths = l.readonly_paths;
    r.masked_paths = l.masked_paths;
    for (const auto& [k, v] : l.sysctl) {
      std::string path = "/proc/sys/" + k;
      for (size_t i = 10; i < path.size(); ++i)
        if (path[i] == '.') path[i] = '/';
      r.sysctl.emplace_back(path, v);
    }
    propagation = l.rootfs_propagation;
  }
  // "/" of the new mount namespace stops propagating to the host before the first mount; a
  // slave root stays a slave (events from the host still arrive), anything else is private.
  unsigned long want = propagation_of(propagation);
  r.root_propagation = (want & MS_SLAVE) || (want & MS_SHARED) ? (MS_SLAVE | MS_REC) : (MS_PRIVATE | MS_REC);
  r.final_propagation = want;
  if (c.process && c.process->oom_score_adj) {
    r.has_oom_score_adj = true;
    r.oom_score_adj = *c.process->oom_score_adj;
  }
  return r;
}

}  // namespace kern::bundle
