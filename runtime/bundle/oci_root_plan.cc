// plan_oci_root (pure) and open_bind_sources: the create verb's process, before the clone (see
// oci_root.h). The child walks the steps with the one mount walker (runtime/box/mount_exec.cc).
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
const DeviceNode kDefaults[] = {
    {"/dev/null", 'c', 1, 3},  {"/dev/zero", 'c', 1, 5},    {"/dev/full", 'c', 1, 7},
    {"/dev/random", 'c', 1, 8}, {"/dev/urandom", 'c', 1, 9}, {"/dev/tty", 'c', 5, 0},
};

}  // namespace

std::vector<UniqueFd> open_bind_sources(ConfigRoot& r) {
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

std::vector<MountStep> plan_oci_mounts(const Config& c) {
  std::vector<MountStep> steps;
  auto add = [&](MountStepKind k, const std::string& target, size_t index = static_cast<size_t>(-1)) {
    MountStep s{k, target};
    s.index = index == static_cast<size_t>(-1) ? -1 : static_cast<int>(index);
    steps.push_back(std::move(s));
  };
  add(MountStepKind::root_propagation, "/");
  add(MountStepKind::bind_root, "/");
  for (size_t i = 0; i < c.mounts.size(); ++i) add(MountStepKind::config_mount, c.mounts[i].destination, i);
  const Linux* l = c.linux_config ? &*c.linux_config : nullptr;
  if (l)
    for (size_t i = 0; i < l->devices.size(); ++i) add(MountStepKind::config_device, l->devices[i].path, i);
  add(MountStepKind::enter_root, "/");
  if (l) {
    for (size_t i = 0; i < l->readonly_paths.size(); ++i) add(MountStepKind::config_readonly, l->readonly_paths[i], i);
    for (size_t i = 0; i < l->masked_paths.size(); ++i) add(MountStepKind::config_mask, l->masked_paths[i], i);
  }
  if (c.root_readonly) add(MountStepKind::root_readonly, "/");
  return steps;
}

OciRootPlan plan_oci_root(const Config& c, const std::string& bundle_dir, const std::string& root_path,
                          bool in_userns, bool no_pivot) {
  OciRootPlan plan;
  ConfigRoot& r = plan.root;
  r.root_path = root_path;
  r.no_pivot = no_pivot;
  bool hooks = !c.hooks.prestart.empty() || !c.hooks.create_runtime.empty() || !c.hooks.create_container.empty();
  for (const auto& m : c.mounts) {
    ConfigMount om;
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
  for (DeviceNode d : kDefaults) {
    d.bind_from_host = in_userns;
    r.devices.push_back(d);
  }
  r.default_devices = r.devices.size();
  std::string propagation;
  if (c.linux_config) {
    const Linux& l = *c.linux_config;
    for (const auto& d : l.devices) {
      DeviceNode od;
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

  // The document's steps, with what the root needs around them: the default devices go with
  // the first configured device or, without any, before the links; the /dev links, a read-only
  // /dev, the hooks that must still see the host's paths, then pivot_root; sysctl before
  // readonlyPaths and maskedPaths (/proc/sys is usually among them); propagation and
  // oom_score_adj last.
  bool defaults_done = false;
  auto defaults = [&] {
    if (!defaults_done) plan.steps.push_back(MountStep{MountStepKind::default_devices, "/dev"});
    defaults_done = true;
  };
  for (MountStep& s : plan_oci_mounts(c)) {
    if (s.kind == MountStepKind::config_device) defaults();
    if (s.kind == MountStepKind::enter_root) {
      defaults();
      plan.steps.push_back(MountStep{MountStepKind::dev_links, "/dev"});
      if (r.readonly_dev >= 0) plan.steps.push_back(MountStep{MountStepKind::readonly_dev, "/dev"});
      if (hooks) plan.steps.push_back(MountStep{MountStepKind::hooks_before_enter, "/"});
      plan.steps.push_back(std::move(s));
      for (size_t i = 0; i < r.sysctl.size(); ++i) {
        MountStep w{MountStepKind::sysctl, r.sysctl[i].first};
        w.index = static_cast<int>(i);
        plan.steps.push_back(std::move(w));
      }
      continue;
    }
    plan.steps.push_back(std::move(s));
  }
  if (r.final_propagation != 0) plan.steps.push_back(MountStep{MountStepKind::final_propagation, "/"});
  if (c.process && c.process->oom_score_adj) {
    r.oom_score_adj = *c.process->oom_score_adj;
    plan.steps.push_back(MountStep{MountStepKind::oom_score_adj, "/proc/self/oom_score_adj"});
  }
  return plan;
}

}  // namespace kern::bundle
