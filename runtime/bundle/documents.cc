// default_spec and features_json (see documents.h). Pure.
#include "runtime/bundle/documents.h"

#include <nlohmann/json.hpp>

#include "runtime/bundle/mount_options.h"
#include "runtime/bundle/spec_names.h"
#include "runtime/bundle/state.h"
#include "runtime/caps.h"

namespace kern::bundle {

namespace {
nlohmann::json mount(const char* dest, const char* type, const char* source, std::vector<std::string> options) {
  return {{"destination", dest}, {"type", type}, {"source", source}, {"options", std::move(options)}};
}

template <size_t N>
std::vector<std::string> names(const std::array<std::string_view, N>& a) {
  return std::vector<std::string>(a.begin(), a.end());
}
}  // namespace

std::string default_spec(bool rootless, uid_t uid, gid_t gid, bool cgroup_ns) {
  using nlohmann::json;
  std::vector<std::string> caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
  json process = {
      {"terminal", true},
      {"user", {{"uid", 0}, {"gid", 0}}},
      {"args", {"sh"}},
      {"env", {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
      {"cwd", "/"},
      {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}}},
      {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}},
      {"noNewPrivileges", true}};
  std::vector<std::string> devpts = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"};
  if (!rootless) devpts.push_back("gid=5");  // the tty group exists only where it is mapped
  json mounts = json::array({
      mount("/proc", "proc", "proc", {}),
      mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      mount("/dev/pts", "devpts", "devpts", devpts),
      mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
  });
  // An unprivileged user cannot mount a fresh sysfs; it gets the host's, bound read-only.
  if (rootless) mounts.push_back(mount("/sys", "none", "/sys", {"rbind", "nosuid", "noexec", "nodev", "ro"}));
  else mounts.push_back(mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}));
  mounts.push_back(mount("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}));
  json ns = json::array();
  for (const char* t : {"pid", "network", "ipc", "uts", "mount"}) ns.push_back({{"type", t}});
  if (cgroup_ns) ns.push_back({{"type", "cgroup"}});
  json linux_part = {
      {"namespaces", ns},
      {"maskedPaths",
       {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"}},
      {"readonlyPaths",
       {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}};
  if (rootless) {
    linux_part["namespaces"].push_back({{"type", "user"}});
    linux_part["uidMappings"] = {{{"containerID", 0}, {"hostID", uid}, {"size", 1}}};
    linux_part["gidMappings"] = {{{"containerID", 0}, {"hostID", gid}, {"size", 1}}};
  } else {
    linux_part["resources"] = {{"devices", {{{"allow", false}, {"access", "rwm"}}}}};
  }
  json doc = {{"ociVersion", kOciVersion}, {"process", process}, {"root", {{"path", "rootfs"}, {"readonly", true}}},
              {"hostname", "kern"}, {"mounts", mounts}, {"linux", linux_part}};
  return doc.dump(4) + "\n";
}

std::string features_json() {
  using nlohmann::json;
  std::vector<std::string> caps;
  for (int c = 0; c <= kCapNamedLast; ++c) caps.emplace_back(cap_name(c));
  std::vector<std::string> actions;
  for (auto a : kSeccompActions) actions.emplace_back(a);
  json doc = {
      {"ociVersionMin", "1.0.0"},
      {"ociVersionMax", kOciVersion},
      {"hooks", {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}},
      {"mountOptions", carried_out_mount_options()},
      {"linux",
       {{"namespaces", names(kNamespaceTypes)},
        {"capabilities", caps},
        // cgroup v2, and v1 for the host's root (runtime/cgroup/container.h); with --systemd-cgroup kern
        // follows systemd's naming of the path and writes the cgroup itself (kern-oci(1)).
        {"cgroup", {{"v1", true}, {"v2", true}, {"systemd", true}, {"systemdUser", true}}},
        {"seccomp",
         {{"enabled", true},
          {"actions", actions},
          {"operators", names(kSeccompOps)},
          {"knownFlags", names(kSeccompFlags)},
          {"supportedFlags", names(kSeccompFlagsSupported)}}},
        {"apparmor", {{"enabled", false}}},
        {"selinux", {{"enabled", false}}},
        {"intelRdt", {{"enabled", false}}}}},
      {"annotations",
       {{"io.kern.oci.verbs", "spec features state list create start run exec delete kill ps pause resume update events"},
        {"io.kern.oci.not-implemented", "events (without --stats)"},
        {"io.kern.require-limits", "true: refuse to run a container whose resources are not in force"},
        {"io.kern.enforcement", "in state: what the kernel says is in force, per cgroup file"},
        {"io.kern.report-fd", "N: create writes the created record with the enforcement to fd N"}}}};
  return doc.dump(4) + "\n";
}

}  // namespace kern::bundle
