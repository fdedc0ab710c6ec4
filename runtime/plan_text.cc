// --plan's rendering of a LaunchPlan; see plan_text.h.
#include "runtime/plan_text.h"

#include <linux/sched.h>
#include <unistd.h>

#include <sstream>

#include "runtime/caps.h"
#include "runtime/cgroup/enforcement.h"
#include "runtime/cgroup/io_throttle.h"
#include "runtime/mount_plan.h"
#include "runtime/sys/human_size.h"
#include "runtime/userns.h"

namespace kern {
namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string id_map_text(const LaunchPlan& p, bool uid) {
  if (!(p.clone_flags & CLONE_NEWUSER)) return "none made (no user namespace of its own)";
  if (!p.explicit_id_maps) return describe_id_map(uid ? ::getuid() : ::getgid(), p.uid_range);
  std::string out;
  for (const auto& l : uid ? p.uid_map : p.gid_map)
    out += (out.empty() ? "" : " ") + std::to_string(l.inside) + ":" + std::to_string(l.outside) + ":" +
           std::to_string(l.count);
  return out.empty() ? "none" : out;
}

std::string cgroup_text(const LaunchPlan& p) {
  const Limits& l = p.cgroup.limits;
  std::string o = cgroup_policy_name(p.cgroup.policy);
  if (p.cgroup.policy == CgroupPolicy::none) return o;
  o += " memory.max=" + std::to_string(effective_memory_max(l)) + (l.memory_max ? "" : "(default)");
  o += " pids.max=" + std::to_string(effective_pids_max(l)) + (l.pids_max ? "" : "(default)");
  if (l.cpus) o += " cpu.max=" + sys::short_decimal(*l.cpus);
  if (!l.cpuset_cpus.empty()) o += " cpuset.cpus=" + l.cpuset_cpus;
  for (const auto& t : l.io_max) o += " io.max=\"" + io_max_line(t) + "\"";
  return o;
}

std::vector<std::string> mount_lines(const LaunchPlan& p) {
  if (p.mounts.config != nullptr) return describe_config_steps(p.mounts.steps, *p.mounts.config);
  std::vector<std::string> out;
  for (const auto& step : p.mounts.steps) out.push_back(describe_step(step));
  return out;
}

std::string seccomp_text(const LaunchPlan& p) {
  std::string s = p.seccomp_name;
  if (p.mounts.config != nullptr && p.seccomp.filter != nullptr)
    s += " (" + std::to_string(p.seccomp.len) + " instructions" +
         (p.seccomp_notify ? ", SCMP_ACT_NOTIFY to its agent)" : ")");
  return s;
}

std::string init_text(const LaunchPlan& p) {
  return p.init_becomes_workload ? "waits for start, then becomes the workload (its execve): the workload is PID 1"
                                 : "PID 1 reaps and forwards signals";
}

}  // namespace

const char* cgroup_policy_name(CgroupPolicy p) {
  switch (p) {
    case CgroupPolicy::best_effort: return "best-effort";
    case CgroupPolicy::require: return "require";
    case CgroupPolicy::allow_uncapped: return "allow-uncapped";
    case CgroupPolicy::none: return "none";
  }
  return "?";
}

std::vector<std::string> namespace_names(unsigned long long f) {
  std::vector<std::string> ns;
  if (f & CLONE_NEWUSER) ns.push_back("user");
  if (f & CLONE_NEWPID) ns.push_back("pid");
  if (f & CLONE_NEWNS) ns.push_back("mount");
  if (f & CLONE_NEWNET) ns.push_back("net");
  if (f & CLONE_NEWUTS) ns.push_back("uts");
  if (f & CLONE_NEWIPC) ns.push_back("ipc");
  if (f & CLONE_NEWCGROUP) ns.push_back("cgroup");
  if (f & CLONE_NEWTIME) ns.push_back("time");
  return ns;
}

std::string plan_text(const LaunchPlan& p, const PlanExtras& x) {
  std::ostringstream o;
  o << "1. cgroup: " << (x.cgroup.empty() ? cgroup_text(p) : join(x.cgroup, "; ")) << "\n";
  o << "2. clone3: namespaces " << join(namespace_names(p.clone_flags), ",") << "\n";
  o << "3. id map: uid " << id_map_text(p, true) << ", gid " << id_map_text(p, false) << "\n";
  int i = 0;
  for (const auto& line : mount_lines(p)) o << "4." << ++i << " mount: " << line << "\n";
  o << "5. hostname: " << (p.hostname.empty() ? "(the host's)" : p.hostname) << x.network_note << "\n";
  o << "6. init: " << init_text(p) << "\n";
  const ExecPlan& e = p.exec;
  o << "7. workload: setsid, close fds, cwd " << e.cwd << ", ids " << e.creds.uid << ":" << e.creds.gid;
  if (!e.creds.groups.empty()) {
    o << ", groups";
    for (gid_t g : e.creds.groups) o << " " << g;
  }
  o << ", capabilities " << cap_list(e.creds.caps.bounding);
  if (e.creds.caps.effective != e.creds.caps.bounding) o << " (effective " << cap_list(e.creds.caps.effective) << ")";
  if (e.creds.caps.ambient) o << " (ambient " << cap_list(e.creds.caps.ambient) << ")";
  o << (e.no_new_privs ? ", no_new_privs" : "") << ", seccomp " << seccomp_text(p) << ", execve " << join(e.argv, " ")
    << "\n";
  for (const auto& d : p.mounts.devices) o << "device grant: " << d.host_path << " -> " << d.box_path << " (" << d.origin << ")\n";
  return o.str();
}

json plan_json(const LaunchPlan& p, const PlanExtras& x) {
  json j;
  const Limits& l = p.cgroup.limits;
  if (!x.cgroup.empty()) {
    j["cgroup"] = {{"lines", x.cgroup}};
  } else {
    json io = json::array();
    for (const auto& t : l.io_max) io.push_back(io_max_line(t));
    bool none = p.cgroup.policy == CgroupPolicy::none;
    j["cgroup"] = {{"policy", cgroup_policy_name(p.cgroup.policy)},
                   {"memory_max", none ? json(nullptr) : json(effective_memory_max(l))},
                   {"memory_max_default", !l.memory_max.has_value()},
                   {"pids_max", none ? json(nullptr) : json(effective_pids_max(l))},
                   {"pids_max_default", !l.pids_max.has_value()},
                   {"cpu_max", l.cpus ? json(sys::short_decimal(*l.cpus)) : json(nullptr)},
                   {"cpuset_cpus", l.cpuset_cpus.empty() ? json(nullptr) : json(l.cpuset_cpus)},
                   {"io_max", std::move(io)}};
  }
  j["namespaces"] = namespace_names(p.clone_flags);
  j["id_map"] = {{"uid", id_map_text(p, true)}, {"gid", id_map_text(p, false)}};
  j["mounts"] = mount_lines(p);
  j["hostname"] = p.hostname;
  j["network"] = x.network.empty() ? json(nullptr) : json(x.network);
  j["init"] = init_text(p);
  const ExecPlan& e = p.exec;
  j["workload"] = {{"setsid", true},
                   {"close_fds", true},
                   {"cwd", e.cwd},
                   {"uid", e.creds.uid},
                   {"gid", e.creds.gid},
                   {"groups", e.creds.groups},
                   {"capabilities", cap_names(e.creds.caps.bounding)},
                   {"effective", cap_names(e.creds.caps.effective)},
                   {"ambient", cap_names(e.creds.caps.ambient)},
                   {"no_new_privs", e.no_new_privs},
                   {"seccomp", seccomp_text(p)},
                   {"argv", e.argv}};
  json grants = json::array();
  for (const auto& d : p.mounts.devices) grants.push_back({{"host_path", d.host_path}, {"box_path", d.box_path}, {"origin", d.origin}});
  j["device_grants"] = std::move(grants);
  return j;
}

}  // namespace kern
