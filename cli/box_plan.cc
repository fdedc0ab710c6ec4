// --show-config and --plan output for kern box: what would run, printed and nothing else, as
// text lines or (with --json) one JSON object carrying the same facts.
#include <linux/sched.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/spec_builder.h"
#include "profiles/units.h"
#include "runtime/caps.h"
#include "runtime/cgroup/io_throttle.h"
#include "runtime/launch_plan.h"
#include "runtime/mount_plan.h"
#include "runtime/plan_text.h"
#include "runtime/net/private_net_plan.h"
#include "runtime/seccomp_filter.h"
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

using nlohmann::json;

// A size or count left to the default is null.
json opt_json(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

json devices_json(const BoxSpec& s) {
  json arr = json::array();
  for (const auto& d : s.devices) arr.push_back({{"host_path", d.host_path}, {"box_path", d.box_path}, {"origin", d.origin}});
  return arr;
}

// Strings from the user or the image need not be UTF-8: dumped with U+FFFD for a bad byte.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

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
  o << "seccomp: " << seccomp_mode_name(s.seccomp) << "\n";
  o << "capabilities: " << cap_list(s.caps_keep) << "\n";
  o << "cgroup: " << cgroup_policy_name(s.cgroup_policy) << "\n";
  o << "memory_max: " << opt_size(s.limits.memory_max, "default") << "\n";
  o << "memory_swap_max: "
    << (s.limits.memory_swap_max == kSwapUnlimited ? "max" : opt_size(s.limits.memory_swap_max, "default")) << "\n";
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

// The plan prepare() makes of the spec, rendered (runtime/plan_text.h), with what the launch
// adds around it: the network it attaches and the profiles' notes.
PlanExtras plan_extras(const BoxSpec& s) {
  PlanExtras x;
  x.network = net::net_mode_name(s.net);
  x.network_note = s.net == NetMode::host   ? ", host network"
                   : s.net == NetMode::none ? ", loopback up"
                                            : ", loopback up; pasta connects it before the workload runs";
  return x;
}

std::string show_plan(const BuiltBox& b) {
  std::string o = plan_text(prepare(b.spec), plan_extras(b.spec));
  for (const auto& line : b.profiles.plan) o += "profile: " + line + "\n";
  return log::sanitize_lines(o);
}

// The keys of show_config's lines, with typed values: a size, count or CPU figure left to the
// default is null, lists are arrays (empty when the text has no line), timeout in milliseconds.
std::string show_config_json(const BuiltBox& b) {
  const BoxSpec& s = b.spec;
  json j;
  j["name"] = s.name;
  j["image"] = s.image_ref.empty() ? json(nullptr) : json(s.image_ref);
  j["lower_dirs"] = s.lower_dirs;
  j["command"] = s.argv;
  j["env"] = s.env;
  j["workdir"] = s.cwd;
  j["user"] = {{"uid", s.uid}, {"gid", s.gid}};
  j["hostname"] = s.hostname;
  j["network"] = net::net_mode_name(s.net);
  j["egress_allow"] = s.egress_allow;
  json publish = json::array(), hosts = json::array();
  json dns = json::array();
  if (s.net == NetMode::private_net) {
    for (const auto& p : s.private_net.publish)
      publish.push_back({{"host_ip", p.host_ip.empty() ? json(nullptr) : json(p.host_ip)},
                         {"host_port", p.host_port},
                         {"box_port", p.box_port},
                         {"protocol", p.udp ? "udp" : "tcp"}});
    dns = s.private_net.nameservers;
    for (const auto& [name, ip] : s.private_net.hosts) hosts.push_back({{"name", name}, {"ip", ip}});
  }
  j["publish"] = std::move(publish);
  j["dns"] = std::move(dns);
  j["add_host"] = std::move(hosts);
  j["read_only"] = s.read_only;
  j["timeout_ms"] = s.timeout_ms;
  j["uid_range"] = s.uid_range;
  j["seccomp"] = seccomp_mode_name(s.seccomp);
  j["capabilities"] = cap_names(s.caps_keep);
  j["cgroup"] = cgroup_policy_name(s.cgroup_policy);
  j["memory_max"] = opt_json(s.limits.memory_max);
  j["memory_swap_max"] = s.limits.memory_swap_max == kSwapUnlimited ? json("max") : opt_json(s.limits.memory_swap_max);
  j["pids_max"] = opt_json(s.limits.pids_max);
  j["cpus"] = s.limits.cpus ? json(*s.limits.cpus) : json(nullptr);
  j["cpuset_cpus"] = s.limits.cpuset_cpus.empty() ? json(nullptr) : json(s.limits.cpuset_cpus);
  j["nice"] = s.limits.nice ? json(*s.limits.nice) : json(nullptr);
  json io = json::array();
  for (const auto& t : s.limits.io_max) io.push_back({{"device", t.device}, {"line", io_max_line(t)}});
  j["io_max"] = std::move(io);
  json binds = json::array();
  for (const auto& v : s.binds) binds.push_back({{"source", v.source}, {"dest", v.dest}, {"read_only", v.read_only}});
  j["bind"] = std::move(binds);
  json tmpfs = json::array();
  for (const auto& t : s.tmpfs) tmpfs.push_back({{"dest", t.dest}, {"size_bytes", t.size_bytes}, {"origin", t.origin}});
  j["tmpfs"] = std::move(tmpfs);
  j["device"] = devices_json(s);
  return dump(j);
}

// show_plan's steps in order, one key each, from the same plan.
std::string show_plan_json(const BuiltBox& b) {
  json j = plan_json(prepare(b.spec), plan_extras(b.spec));
  j["profiles"] = b.profiles.plan;
  return dump(j);
}

}  // namespace kern::cli
