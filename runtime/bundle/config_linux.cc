// The "linux" object of config.json -> Linux: namespaces, id maps, devices, seccomp, paths,
// personality (resources are read by config_resources.cc). Pure.
#include <sys/stat.h>

#include <array>
#include <string_view>

#include "runtime/bundle/config_parts.h"
#include "runtime/bundle/spec_names.h"

namespace kern::bundle {

namespace {

template <size_t N>
Result<std::string> enum_str(const JsonNode& n, const std::array<std::string_view, N>& allowed) {
  KERN_TRY_ASSIGN(std::string v, n.str());
  if (!one_of(v, allowed)) return fail(n.error("unknown value \"" + v + "\""));
  return v;
}

Status parse_namespaces(const JsonNode& arr, std::vector<Namespace>& out) {
  KERN_TRY(each_object(arr, {"type"}, [&](const JsonNode& n) -> Status {
    Namespace ns;
    KERN_TRY_ASSIGN(ns.type, enum_str(n.at("type"), kNamespaceTypes));
    KERN_TRY(get(n, "path", ns.path));
    // The specification: a namespace type given twice is an error.
    for (const auto& seen : out)
      if (seen.type == ns.type) return fail(n.at("type").error("namespace \"" + ns.type + "\" is given twice"));
    out.push_back(std::move(ns));
    return {};
  }));
  return {};
}

Status parse_devices(const JsonNode& arr, std::vector<Device>& out) {
  KERN_TRY(each_object(arr, {"type", "path"}, [&](const JsonNode& d) -> Status {
    Device dev;
    KERN_TRY_ASSIGN(dev.type, d.at("type").str());
    if (dev.type.size() != 1 || std::string_view("cbup").find(dev.type[0]) == std::string_view::npos)
      return fail(d.at("type").error("expected one of c, b, u, p, got \"" + dev.type + "\""));
    KERN_TRY_ASSIGN(dev.path, d.at("path").str());
    if (dev.path.empty() || dev.path[0] != '/') return fail(d.at("path").error("must be an absolute path"));
    KERN_TRY(get(d, "major", dev.major));
    KERN_TRY(get(d, "minor", dev.minor));
    // major and minor are required for every type but a fifo.
    if (dev.type != "p" && (!dev.major || !dev.minor))
      return fail(d.error("a device of type " + dev.type + " needs major and minor"));
    KERN_TRY(get(d, "fileMode", dev.file_mode));
    if (dev.file_mode && (*dev.file_mode & S_IFMT) != 0) {
      // podman (as root) writes st_mode whole: 0o20666 for a character device. The file-type
      // bits are dropped when they are the node's own type, as runc does; another type's are
      // an error.
      mode_t want = dev.type == "b" ? S_IFBLK : dev.type == "p" ? S_IFIFO : S_IFCHR;
      if ((*dev.file_mode & S_IFMT) != want)
        return fail(d.at("fileMode").error("its file-type bits are not those of a device of type " + dev.type));
      *dev.file_mode &= ~static_cast<uint32_t>(S_IFMT);
    }
    if (dev.file_mode && *dev.file_mode > 0777)
      return fail(d.at("fileMode").error("the permission bits must be at most 0777 (511)"));
    KERN_TRY(get(d, "uid", dev.uid));
    KERN_TRY(get(d, "gid", dev.gid));
    out.push_back(std::move(dev));
    return {};
  }));
  return {};
}

Status parse_seccomp_arg(const JsonNode& a, SeccompArg& out) {
  KERN_TRY(a.object());
  for (const char* k : {"index", "value", "op"}) KERN_TRY(require(a, k));
  KERN_TRY_ASSIGN(out.index, a.at("index").u32());
  if (out.index > 5) return fail(a.at("index").error("a system call has arguments 0 to 5"));
  KERN_TRY_ASSIGN(out.value, a.at("value").u64());
  std::optional<uint64_t> two;
  KERN_TRY(get(a, "valueTwo", two));
  out.value_two = two.value_or(0);
  KERN_TRY_ASSIGN(out.op, enum_str(a.at("op"), kSeccompOps));
  return {};
}

}  // namespace

Status parse_seccomp(const JsonNode& s, Seccomp& out) {
  KERN_TRY(s.object());
  KERN_TRY(require(s, "defaultAction"));
  KERN_TRY_ASSIGN(out.default_action, enum_str(s.at("defaultAction"), kSeccompActions));
  KERN_TRY(get(s, "defaultErrnoRet", out.default_errno_ret));
  KERN_TRY(get(s, "architectures", out.architectures));
  for (size_t i = 0; i < out.architectures.size(); ++i)
    if (out.architectures[i].rfind("SCMP_ARCH_", 0) != 0)
      return fail(s.at("architectures").at(i).error("expected SCMP_ARCH_<NAME>"));
  KERN_TRY(get(s, "flags", out.flags));
  for (size_t i = 0; i < out.flags.size(); ++i)
    if (!one_of(out.flags[i], kSeccompFlags))
      return fail(s.at("flags").at(i).error("unknown value \"" + out.flags[i] + "\""));
  KERN_TRY(get(s, "listenerPath", out.listener_path));
  KERN_TRY(get(s, "listenerMetadata", out.listener_metadata));
  if (s.has("syscalls")) {
    JsonNode arr = s.at("syscalls");
    KERN_TRY(each_object(arr, {"names", "action"}, [&](const JsonNode& r) -> Status {
      SeccompRule rule;
      KERN_TRY_ASSIGN(rule.names, r.at("names").strings());
      if (rule.names.empty()) return fail(r.at("names").error("needs at least one name"));
      KERN_TRY_ASSIGN(rule.action, enum_str(r.at("action"), kSeccompActions));
      KERN_TRY(get(r, "errnoRet", rule.errno_ret));
      if (r.has("args")) {
        JsonNode args = r.at("args");
        KERN_TRY(args.array());
        for (size_t j = 0; j < args.size(); ++j) {
          SeccompArg a;
          KERN_TRY(parse_seccomp_arg(args.at(j), a));
          rule.args.push_back(a);
        }
      }
      out.syscalls.push_back(std::move(rule));
      return {};
    }));
  }
  bool notify = out.default_action == "SCMP_ACT_NOTIFY";
  for (const auto& r : out.syscalls) notify = notify || r.action == "SCMP_ACT_NOTIFY";
  // The specification: SCMP_ACT_NOTIFY needs a listener to hand the notify fd to.
  if (notify && out.listener_path.empty())
    return fail(s.error("SCMP_ACT_NOTIFY is used but listenerPath is not set"));
  return {};
}

Status parse_linux(const JsonNode& l, Linux& out) {
  KERN_TRY(l.object());
  if (l.has("namespaces")) KERN_TRY(parse_namespaces(l.at("namespaces"), out.namespaces));
  KERN_TRY(parse_id_mappings(l, "uidMappings", out.uid_mappings));
  KERN_TRY(parse_id_mappings(l, "gidMappings", out.gid_mappings));
  if (l.has("devices")) KERN_TRY(parse_devices(l.at("devices"), out.devices));
  if (l.has("resources")) {
    Resources r;
    KERN_TRY(parse_resources(l.at("resources"), r));
    out.resources = std::move(r);
  }
  KERN_TRY(get(l, "cgroupsPath", out.cgroups_path));
  KERN_TRY(get(l, "sysctl", out.sysctl));
  if (l.has("seccomp")) {
    Seccomp s;
    KERN_TRY(parse_seccomp(l.at("seccomp"), s));
    out.seccomp = std::move(s);
  }
  if (l.has("rootfsPropagation")) {
    KERN_TRY_ASSIGN(out.rootfs_propagation, enum_str(l.at("rootfsPropagation"), kRootfsPropagation));
  }
  KERN_TRY(get(l, "maskedPaths", out.masked_paths));
  KERN_TRY(get(l, "readonlyPaths", out.readonly_paths));
  KERN_TRY(get(l, "mountLabel", out.mount_label));
  if (l.has("personality")) {
    JsonNode p = l.at("personality");
    KERN_TRY(p.object());
    if (p.has("domain")) {
      KERN_TRY_ASSIGN(out.personality_domain,
                      enum_str(p.at("domain"), std::array<std::string_view, 2>{"LINUX", "LINUX32"}));
    }
    KERN_TRY(get(p, "flags", out.personality_flags));
  }
  out.has_intel_rdt = l.has("intelRdt");
  out.has_memory_policy = l.has("memoryPolicy");
  out.has_time_offsets = l.has("timeOffsets");
  out.has_net_devices = l.has("netDevices");
  return {};
}

}  // namespace kern::bundle
