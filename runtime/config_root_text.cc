// describe_config_steps: a config root's steps, one line each, in the walker's order (see
// config_root.h).
#include <sys/mount.h>

#include <cstdio>

#include "runtime/config_root.h"
#include "runtime/mount_plan.h"

namespace kern {
namespace {

std::string propagation_name(unsigned long p) {
  std::string rec = (p & MS_REC) ? "r" : "";
  if (p & MS_SHARED) return rec + "shared";
  if (p & MS_SLAVE) return rec + "slave";
  if (p & MS_UNBINDABLE) return rec + "unbindable";
  if (p & MS_PRIVATE) return rec + "private";
  return "none";
}

std::string flag_names(unsigned long f) {
  static constexpr std::pair<unsigned long, const char*> kNames[] = {
      {MS_RDONLY, "ro"},         {MS_NOSUID, "nosuid"},   {MS_NODEV, "nodev"},   {MS_NOEXEC, "noexec"},
      {MS_SYNCHRONOUS, "sync"},  {MS_DIRSYNC, "dirsync"}, {MS_NOATIME, "noatime"}, {MS_NODIRATIME, "nodiratime"},
      {MS_RELATIME, "relatime"}, {MS_STRICTATIME, "strictatime"}, {MS_MANDLOCK, "mand"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (f & bit) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

std::string mount_line(const ConfigMount& m, bool readonly_dev) {
  const MountOptions& o = m.options;
  std::string line = m.destination + " type=" + (o.bind ? (o.recursive_bind ? "rbind" : "bind") : m.type);
  if (!m.source.empty()) line += " source=" + m.source;
  std::string flags = flag_names(o.flags);
  if (!flags.empty()) line += " " + flags;
  if (o.propagation) line += " " + propagation_name(o.propagation);
  if (o.attr_set || o.attr_clr) line += " mount_setattr";
  if (o.tmpcopyup) line += " tmpcopyup";
  if (!o.data.empty()) line += " data=" + o.data;
  if (readonly_dev) line += " (mounted writable, read-only once /dev is made)";
  return line;
}

std::string device_line(const DeviceNode& d) {
  std::string line = d.path + " " + std::string(1, d.type) + " " + std::to_string(d.major) + ":" + std::to_string(d.minor);
  if (d.keep_ptmx_link) return line + " (the link to pts/ptmx stays)";
  if (d.bind_from_host) return line + " bound from the host";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", d.mode & 07777);
  return line + " mode " + mode + " owner " + std::to_string(d.uid) + ":" + std::to_string(d.gid);
}

}  // namespace

std::vector<std::string> describe_config_steps(const std::vector<MountStep>& steps, const ConfigRoot& r) {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    std::string name = step_kind_name(s.kind);
    size_t i = static_cast<size_t>(s.index);
    switch (s.kind) {
      case MountStepKind::root_propagation:
        out.push_back(name + " / " + propagation_name(r.root_propagation));
        break;
      case MountStepKind::bind_root:
        out.push_back(name + " " + r.root_path);
        break;
      case MountStepKind::config_mount:
        out.push_back(mount_line(r.mounts[i], s.index == r.readonly_dev));
        break;
      case MountStepKind::default_devices:
        for (size_t d = 0; d < r.default_devices; ++d) out.push_back("device " + device_line(r.devices[d]) + " (default)");
        break;
      case MountStepKind::config_device:
        out.push_back(name + " " + device_line(r.devices[r.default_devices + i]));
        break;
      case MountStepKind::dev_links:
        out.push_back("dev-links /dev/fd /dev/stdin /dev/stdout /dev/stderr (and /dev/ptmx -> pts/ptmx with a devpts)");
        break;
      case MountStepKind::readonly_dev:
        out.push_back("readonly /dev");
        break;
      case MountStepKind::hooks_before_enter:
        out.push_back("hooks prestart, createRuntime, createContainer (in the runtime's namespaces)");
        break;
      case MountStepKind::enter_root:
        out.push_back(r.no_pivot ? "chroot / (--no-pivot)" : name + " /");
        break;
      case MountStepKind::sysctl:
        out.push_back("sysctl " + r.sysctl[i].first + "=" + r.sysctl[i].second);
        break;
      case MountStepKind::config_readonly:
        out.push_back(name + " " + r.readonly_paths[i]);
        break;
      case MountStepKind::config_mask:
        out.push_back(name + " " + r.masked_paths[i]);
        break;
      case MountStepKind::root_readonly:
        out.push_back(name + " /");
        break;
      case MountStepKind::final_propagation:
        out.push_back(name + " / " + propagation_name(r.final_propagation));
        break;
      case MountStepKind::oom_score_adj:
        out.push_back("oom_score_adj " + std::to_string(r.oom_score_adj));
        break;
      default:
        out.push_back(describe_step(s));
        break;
    }
  }
  return out;
}

}  // namespace kern
