// describe_oci_root: the steps build_oci_root walks, one line each, in its order (see oci_root.h).
#include <sys/mount.h>

#include <cstdio>

#include "runtime/bundle/oci_root.h"

namespace kern::bundle {
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

std::string mount_line(const OciMount& m, bool readonly_dev) {
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

std::string device_line(const OciDevice& d) {
  std::string line = d.path + " " + std::string(1, d.type) + " " + std::to_string(d.major) + ":" + std::to_string(d.minor);
  if (d.keep_ptmx_link) return line + " (the link to pts/ptmx stays)";
  if (d.bind_from_host) return line + " bound from the host";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", d.mode & 07777);
  return line + " mode " + mode + " owner " + std::to_string(d.uid) + ":" + std::to_string(d.gid);
}

}  // namespace

std::vector<std::string> describe_oci_root(const OciRoot& r) {
  std::vector<std::string> out;
  auto defaults = [&] {
    for (size_t i = 0; i < r.default_devices; ++i) out.push_back("device " + device_line(r.devices[i]) + " (default)");
  };
  for (const auto& s : r.steps) {
    std::string name = oci_step_name(s.kind);
    switch (s.kind) {
      case OciStepKind::root_propagation:
        out.push_back(name + " / " + propagation_name(r.root_propagation));
        break;
      case OciStepKind::bind_root:
        out.push_back(name + " " + r.root_path);
        break;
      case OciStepKind::mount:
        out.push_back(mount_line(r.mounts[static_cast<size_t>(s.index)], s.index == r.readonly_dev));
        break;
      case OciStepKind::device:
        if (s.index == 0) defaults();
        out.push_back(name + " " + device_line(r.devices[r.default_devices + static_cast<size_t>(s.index)]));
        break;
      case OciStepKind::pivot_root:
        if (r.devices.size() == r.default_devices) defaults();
        out.push_back("dev-links /dev/fd /dev/stdin /dev/stdout /dev/stderr (and /dev/ptmx -> pts/ptmx with a devpts)");
        if (r.readonly_dev >= 0) out.push_back("readonly /dev");
        out.push_back(r.no_pivot ? "chroot / (--no-pivot)" : name + " /");
        for (const auto& [path, value] : r.sysctl) out.push_back("sysctl " + path + "=" + value);
        break;
      case OciStepKind::readonly:
        out.push_back(name + " " + r.readonly_paths[static_cast<size_t>(s.index)]);
        break;
      case OciStepKind::mask:
        out.push_back(name + " " + r.masked_paths[static_cast<size_t>(s.index)]);
        break;
      case OciStepKind::root_readonly:
        out.push_back(name + " /");
        break;
    }
  }
  if (r.final_propagation != 0) out.push_back("root-propagation / " + propagation_name(r.final_propagation));
  if (r.has_oom_score_adj) out.push_back("oom_score_adj " + std::to_string(r.oom_score_adj));
  return out;
}

}  // namespace kern::bundle
