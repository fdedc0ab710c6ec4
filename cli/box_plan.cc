// --show-config and --plan output for kern box: what would run, printed and nothing else.
#include <linux/sched.h>
#include <unistd.h>

#include <sstream>

#include "cli/spec_builder.h"
#include "profiles/units.h"
#include "runtime/caps.h"
#include "runtime/io_throttle.h"
#include "runtime/launch_plan.h"
#include "runtime/mount_plan.h"
#include "runtime/net/private_net_plan.h"
#include "runtime/sys/log.h"
#include "runtime/userns.h"

namespace kern::cli {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string opt_size(const std::optional<uint64_t>& v, const std::string& dflt) {
  return v ? std::to_string(*v) : dflt;
}

std::string policy_name(CgroupPolicy p) {
  switch (p) {
    case CgroupPolicy::best_effort: return "best-effort";
    case CgroupPolicy::require: return "require";
    case CgroupPolicy::allow_uncapped: return "allow-uncapped";
    case CgroupPolicy::none: return "none";
  }
  return "?";
}

}  // namespace

std::string show_config(const BuiltBox& b) {
  const BoxSpec& s = b.spec;
  std::ostringstream o;
  o << "name: " << s.name << "\n";
  o << "image: " << (s.image_ref.empty() ? "-" : s.image_ref) << "\n";
  o << "lower_dirs: " << join(s.lower_dirs, ":") << "\n";
  o << "command: " << join(s.argv, " ") << "\n";
  for (const auto& e : s.env) o << "env: " << e << "\n";
  o << "workdir: " << s.cwd << "\n";
  o << "user: " << s.uid << ":" << s.gid << "\n";
  o << "hostname: " << s.hostname << "\n";
  o << "network: " << net::net_mode_name(s.net) << "\n";
  if (!s.egress_allow.empty()) o << "egress_allow: " << join(s.egress_allow, ",") << "\n";
  if (s.net == NetMode::private_net) {
    for (const auto& p : s.private_net.publish)
      o << "publish: " << (p.host_ip.empty() ? "" : p.host_ip + ":") << p.host_port << ":" << p.box_port
        << (p.udp ? "/udp" : "/tcp") << "\n";
    o << "dns: " << join(s.private_net.nameservers, ",") << "\n";
    for (const auto& [name, ip] : s.private_net.hosts) o << "add_host: " << name << ":" << ip << "\n";
  }
  o << "read_only: " << (s.read_only ? "true" : "false") << "\n";
  o << "timeout: " << (s.timeout_ms ? profiles::format_duration_ms(s.timeout_ms) : "0") << "\n";
  o << "uid_range: " << (s.uid_range ? "true" : "false") << "\n";
  o << "seccomp: " << (s.seccomp == SeccompMode::allowlist ? "allowlist" : "denylist") << "\n";
  o << "capabilities: " << cap_list(s.caps_keep) << "\n";
  o << "cgroup: " << policy_name(s.cgroup_policy) << "\n";
  o << "memory_max: " << opt_size(s.limits.memory_max, "default") << "\n";
  o << "memory_swap_max: " << opt_size(s.limits.memory_swap_max, "default") << "\n";
  o << "pids_max: " << opt_size(s.limits.pids_max, "default") << "\n";
  o << "cpus: " << (s.limits.cpus ? profiles::format_cpus(*s.limits.cpus) : "unlimited") << "\n";
  o << "cpuset_cpus: " << (s.limits.cpuset_cpus.empty() ? "-" : s.limits.cpuset_cpus) << "\n";
  if (s.limits.nice) o << "nice: " << *s.limits.nice << "\n";
  for (const auto& t : s.limits.io_max) o << "io_max: " << io_max_line(t) << " (" << t.device << ")\n";
  for (const auto& v : s.binds)
    o << "bind: " << v.source << ":" << v.dest << (v.read_only ? ":ro" : ":rw") << "\n";
  for (const auto& t : s.tmpfs) o << "tmpfs: " << t.dest << ":" << t.size_bytes << " (" << t.origin << ")\n";
  for (const auto& d : s.devices) o << "device: " << d.host_path << " -> " << d.box_path << " (" << d.origin << ")\n";
  // Names, paths, the hostname, env values and the command come from the user or the image.
  return log::sanitize_lines(o.str());
}

std::string show_plan(const BuiltBox& b) {
  const BoxSpec& s = b.spec;
  std::ostringstream o;
  unsigned long long f = box_clone_flags(s);
  std::vector<std::string> ns;
  if (f & CLONE_NEWUSER) ns.push_back("user");
  if (f & CLONE_NEWPID) ns.push_back("pid");
  if (f & CLONE_NEWNS) ns.push_back("mount");
  if (f & CLONE_NEWNET) ns.push_back("net");
  if (f & CLONE_NEWUTS) ns.push_back("uts");
  if (f & CLONE_NEWIPC) ns.push_back("ipc");
  if (f & CLONE_NEWCGROUP) ns.push_back("cgroup");
  o << "1. cgroup: " << policy_name(s.cgroup_policy) << " memory.max=" << opt_size(s.limits.memory_max, "512MiB(default)")
    << " pids.max=" << opt_size(s.limits.pids_max, "512(default)")
    << (s.limits.cpus ? " cpu.max=" + profiles::format_cpus(*s.limits.cpus) : "")
    << (s.limits.cpuset_cpus.empty() ? "" : " cpuset.cpus=" + s.limits.cpuset_cpus);
  for (const auto& t : s.limits.io_max) o << " io.max=\"" << io_max_line(t) << "\"";
  o << "\n";
  o << "2. clone3: namespaces " << join(ns, ",") << "\n";
  o << "3. id map: uid " << describe_id_map(::getuid(), s.uid_range) << ", gid "
    << describe_id_map(::getgid(), s.uid_range) << "\n";
  int i = 0;
  for (const auto& step : build_mount_plan(s)) o << "4." << ++i << " mount: " << describe_step(step) << "\n";
  const char* net = s.net == NetMode::host   ? ", host network"
                    : s.net == NetMode::none ? ", loopback up"
                                             : ", loopback up; pasta connects it before the workload runs";
  o << "5. hostname: " << s.hostname << net << "\n";
  o << "6. init: PID 1 reaps and forwards signals\n";
  o << "7. workload: setsid, close fds, cwd " << s.cwd << ", ids " << s.uid << ":" << s.gid
    << ", capabilities " << cap_list(s.caps_keep) << ", no_new_privs, seccomp "
    << (s.seccomp == SeccompMode::allowlist ? "allowlist" : "denylist") << ", execve "
    << join(s.argv, " ") << "\n";
  for (const auto& d : s.devices) o << "device grant: " << d.host_path << " -> " << d.box_path << " (" << d.origin << ")\n";
  for (const auto& line : b.profiles.plan) o << "profile: " << line << "\n";
  return log::sanitize_lines(o.str());
}

}  // namespace kern::cli
