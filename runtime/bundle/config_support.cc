// check_supported: what a valid config.json asks for that kern does not carry out, refused with
// the JSON path before anything is created. Pure (the host's facts are passed in).
#include "runtime/bundle/config.h"

namespace kern::bundle {

namespace {
Unexpected<Error> refuse(const std::string& path, const std::string& why) {
  return fail(Error(ErrorKind::host_unsupported, 0, path + ": " + why));
}
}  // namespace

Status check_supported(const Config& c, const HostFacts& host) {
  if (!c.has_root) return fail(ErrorKind::config, 0, "root: required on Linux");
  if (!c.process) return fail(ErrorKind::config, 0, "process: required to create a container");
  const Process& p = *c.process;
  if (p.args.empty()) return fail(ErrorKind::config, 0, "process.args: needs at least the program to run");
  if (!p.selinux_label.empty())
    return refuse("process.selinuxLabel", host.selinux ? "applying an SELinux label is not implemented yet in kern"
                                                        : "SELinux is not enabled on this host");
  // Entered at exec (ExecPlan::apparmor_exec); whether it is loaded is load_bundle's check.
  if (!p.apparmor_profile.empty() && p.apparmor_profile != "unconfined" && !host.apparmor)
    return refuse("process.apparmorProfile", "AppArmor is not enabled on this host");
  if (p.has_scheduler) return refuse("process.scheduler", "not supported by kern");
  if (p.has_io_priority) return refuse("process.ioPriority", "not supported by kern");
  if (p.has_exec_cpu_affinity) return refuse("process.execCPUAffinity", "not supported by kern");
  if (!c.linux_config) return {};
  const Linux& l = *c.linux_config;
  if (!l.mount_label.empty())
    return refuse("linux.mountLabel", host.selinux ? "applying an SELinux mount label is not implemented yet in kern"
                                                   : "SELinux is not enabled on this host");
  if (l.has_intel_rdt) return refuse("linux.intelRdt", "Intel RDT (resctrl) is not supported by kern");
  if (l.has_memory_policy) return refuse("linux.memoryPolicy", "not supported by kern");
  if (l.has_time_offsets) return refuse("linux.timeOffsets", "not supported by kern");
  if (l.has_net_devices) return refuse("linux.netDevices", "not supported by kern");
  if (!l.personality_flags.empty())
    return refuse("linux.personality.flags", "no personality flags are defined for Linux");
  if (l.resources) {
    const Resources& r = *l.resources;
    if (r.has_network) return refuse("linux.resources.network", "a cgroup v1 controller; kern uses cgroup v2 only");
    if (r.has_rdma) return refuse("linux.resources.rdma", "not supported by kern");
    // memory.kernel and memory.kernelTCP are deprecated (runtimes may ignore them): cgroup v2
    // has neither; plan_container warns.
  }
  return {};
}

}  // namespace kern::bundle
