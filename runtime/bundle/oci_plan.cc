// plan_container and open_joined_namespaces (see oci_plan.h).
#include "runtime/bundle/oci_plan.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>

#include "runtime/apparmor.h"
#include "runtime/bundle/state.h"
#include "runtime/box_cwd.h"
#include "runtime/caps.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

namespace kern::bundle {

namespace {

struct NsName {
  const char* name;
  unsigned long long flag;
};
constexpr NsName kNs[] = {{"mount", CLONE_NEWNS}, {"pid", CLONE_NEWPID},       {"network", CLONE_NEWNET},
                          {"uts", CLONE_NEWUTS},   {"ipc", CLONE_NEWIPC},       {"user", CLONE_NEWUSER},
                          {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME}};

struct RlimitName {
  const char* name;
  int resource;
};
constexpr RlimitName kRlimits[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},         {"RLIMIT_FSIZE", RLIMIT_FSIZE},     {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_STACK", RLIMIT_STACK},     {"RLIMIT_CORE", RLIMIT_CORE},       {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_NPROC", RLIMIT_NPROC},     {"RLIMIT_NOFILE", RLIMIT_NOFILE},   {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_AS", RLIMIT_AS},           {"RLIMIT_LOCKS", RLIMIT_LOCKS},     {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},     {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

uint64_t cap_set(const std::vector<std::string>& names, std::vector<std::string>& warnings, const char* set) {
  uint64_t bits = 0;
  for (const auto& n : names) {
    auto c = parse_cap(n);
    if (!c || *c == all_caps()) {
      warnings.push_back(std::string("process.capabilities.") + set + ": \"" + n +
                         "\" is not a capability kern knows; left out");
      continue;
    }
    bits |= *c;
  }
  return bits;
}

// The kernel raises an ambient capability only when it is both permitted and inheritable.
// The inheritable set stays exactly the configuration's (filling it beyond that is
// CVE-2022-29162's class: a later execve of a file with inheritable file capabilities would gain
// them), so an ambient one outside it is left out with a warning, as runc and crun leave it out.
uint64_t raisable_ambient(const CapSets& caps, std::vector<std::string>& warnings) {
  uint64_t ok = caps.ambient & caps.permitted & caps.inheritable;
  if (uint64_t left = caps.ambient & ~ok; left != 0)
    warnings.push_back("process.capabilities.ambient: " + cap_list(left) +
                       " not raised: an ambient capability must also be in the permitted and the inheritable set");
  return ok;
}

bool has_ns(const Config& c, const char* type, bool* with_path = nullptr) {
  if (!c.linux_config) return false;
  for (const auto& ns : c.linux_config->namespaces)
    if (ns.type == type) {
      if (with_path) *with_path = !ns.path.empty();
      return true;
    }
  return false;
}

}  // namespace

unsigned long long namespace_flag(const std::string& type) {
  for (const auto& n : kNs)
    if (type == n.name) return n.flag;
  return 0;
}

int rlimit_resource(const std::string& name) {
  for (const auto& r : kRlimits)
    if (name == r.name) return r.resource;
  return -1;
}

Result<ExecPlan> oci_exec_plan(const Process& p, std::vector<std::string>& warnings) {
  ExecPlan ex;
  ex.argv = p.args;
  ex.env = p.env;
  ex.cwd = p.cwd.empty() ? "/" : p.cwd;
  if (ex.cwd[0] != '/') return fail(ErrorKind::config, 0, "process.cwd: must be an absolute path");
  KERN_TRY(check_box_cwd(ex.cwd, "process.cwd"));
  ex.candidates = exec_candidates(p.args[0], p.env);
  ex.script_shell.clear();  // an OCI runtime runs args[0] as given: no shell for scripts without "#!"
  ex.creds.uid = p.user.uid;
  ex.creds.gid = p.user.gid;
  ex.creds.switch_ids = true;
  for (uint32_t g : p.user.additional_gids) ex.creds.groups.push_back(g);
  if (p.user.umask) ex.umask = static_cast<int>(*p.user.umask & 0777);
  CapSets& caps = ex.creds.caps;
  if (p.capabilities) {
    const Capabilities& k = *p.capabilities;
    caps.bounding = cap_set(k.bounding, warnings, "bounding");
    caps.effective = cap_set(k.effective, warnings, "effective");
    caps.permitted = cap_set(k.permitted, warnings, "permitted");
    caps.inheritable = cap_set(k.inheritable, warnings, "inheritable");
    caps.ambient = cap_set(k.ambient, warnings, "ambient");
    caps.ambient = raisable_ambient(caps, warnings);
  }
  for (size_t i = 0; i < p.rlimits.size(); ++i) {
    int res = rlimit_resource(p.rlimits[i].type);
    if (res < 0)
      return fail(ErrorKind::config, 0,
                  "process.rlimits[" + std::to_string(i) + "].type: \"" + p.rlimits[i].type + "\" is not a Linux rlimit");
    ex.rlimits.push_back({res, p.rlimits[i].soft, p.rlimits[i].hard, p.rlimits[i].type});
  }
  ex.no_new_privs = p.no_new_privileges;
  ex.filter_required = false;
  if (!p.apparmor_profile.empty() && p.apparmor_profile != "unconfined")
    ex.apparmor_exec = apparmor_exec_request(p.apparmor_profile);
  return ex;
}

Result<std::unique_ptr<OciLaunch>> plan_container(const LoadedBundle& b, const std::string& id,
                                                  const CreateOptions& o, uid_t euid, gid_t egid) {
  const Config& c = b.config;
  const Process& p = *c.process;
  auto l = std::make_unique<OciLaunch>();
  LaunchPlan& plan = l->plan;
  plan.name = id;
  if (!has_ns(c, "mount"))
    return fail(ErrorKind::config, 0, "linux.namespaces: kern needs a mount namespace of the container's own");
  // A hostname is set in the container's uts namespace (new, or joined by path), never the host's.
  if (!c.hostname.empty() && !has_ns(c, "uts"))
    return fail(ErrorKind::config, 0, "hostname: setting it needs a uts namespace in linux.namespaces");
  if (!c.domainname.empty() && !has_ns(c, "uts"))
    return fail(ErrorKind::config, 0, "domainname: setting it needs a uts namespace in linux.namespaces");
  for (const auto& ns : c.linux_config->namespaces)
    if (ns.path.empty()) plan.clone_flags |= namespace_flag(ns.type);
  plan.hostname = c.hostname;
  plan.sets_hostname = !c.hostname.empty();
  plan.domainname = c.domainname;
  plan.loopback_up = (plan.clone_flags & CLONE_NEWNET) != 0;
  plan.tty = p.terminal;
  plan.console_at_dev = p.terminal;
  plan.die_with_parent = false;
  plan.init_becomes_workload = true;
  plan.init_title = init_title(id);
  plan.cgroup.policy = CgroupPolicy::none;

  const Linux& lx = *c.linux_config;
  bool new_user = (plan.clone_flags & CLONE_NEWUSER) != 0;
  if (new_user) {
    plan.explicit_id_maps = true;
    for (const auto& m : lx.uid_mappings) plan.uid_map.push_back({m.container_id, m.host_id, m.size});
    for (const auto& m : lx.gid_mappings) plan.gid_map.push_back({m.container_id, m.host_id, m.size});
    // Without mappings the caller's own ids become 0, as for a kern box.
    if (plan.uid_map.empty()) plan.uid_map.push_back({0, euid, 1});
    if (plan.gid_map.empty()) plan.gid_map.push_back({0, egid, 1});
  }

  KERN_TRY_ASSIGN(plan.exec, oci_exec_plan(p, l->warnings));
  ExecPlan& ex = plan.exec;
  for (unsigned i = 0; i < o.preserve_fds; ++i) ex.pass_fds.emplace_back(3 + static_cast<int>(i), 3 + static_cast<int>(i));

  if (b.seccomp) {
    plan.seccomp = {b.seccomp->program.data(), static_cast<unsigned short>(b.seccomp->program.size())};
    plan.seccomp_notify = b.seccomp->notify;
    plan.seccomp_name = "linux.seccomp";
  } else {
    plan.seccomp = {nullptr, 0};
    plan.seccomp_name = "none (the config has no linux.seccomp)";
  }
  if (lx.personality_domain) ex.personality = *lx.personality_domain == "LINUX32" ? PER_LINUX32 : PER_LINUX;
  for (size_t i = 0; i < c.mounts.size(); ++i) {
    MountOptions mo = parse_mount_options(c.mounts[i].options);
    if (mo.idmap || !c.mounts[i].uid_mappings.empty() || !c.mounts[i].gid_mappings.empty())
      return fail(Error(ErrorKind::host_unsupported, 0,
                        "mounts[" + std::to_string(i) + "]: idmapped mounts are not implemented yet in kern"));
    if (mo.tmpcopyup && c.mounts[i].type != "tmpfs")
      return fail(Error(ErrorKind::config, 0, "mounts[" + std::to_string(i) + "]: tmpcopyup is for a tmpfs, not \"" +
                                                  c.mounts[i].type + "\""));
  }
  if (lx.resources)
    for (size_t i = 0; i < lx.resources->devices.size(); ++i)
      if (const auto& d = lx.resources->devices[i]; !d.access_ignored.empty())
        l->warnings.push_back("linux.resources.devices[" + std::to_string(i) + "].access: \"" + d.access_ignored +
                              "\" is not one of r, w, m and is left out (the rule is \"" + d.access + "\")");
  if (lx.resources && (lx.resources->memory_kernel || lx.resources->memory_kernel_tcp))
    l->warnings.push_back("linux.resources.memory.kernel and kernelTCP are deprecated and cgroup v2 has neither: ignored");
  // In a user namespace (the container's own, or the one the engine runs kern in) no device
  // node can be made: the host's are bound.
  OciRootPlan root = plan_oci_root(c, b.dir, b.root_path, new_user || !o.initial_userns, o.no_pivot);
  l->root = std::move(root.root);
  plan.mounts.steps = std::move(root.steps);
  plan.mounts.config = &l->root;
  return l;
}

Status open_joined_namespaces(const Config& c, OciLaunch& l) {
  if (!c.linux_config) return {};
  const auto& list = c.linux_config->namespaces;
  for (size_t i = 0; i < list.size(); ++i) {
    const Namespace& ns = list[i];
    if (ns.path.empty()) continue;
    std::string where = "linux.namespaces[" + std::to_string(i) + "].path \"" + ns.path + "\"";
    int fd = ::open(ns.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(Error(ErrorKind::config, errno, "open " + where));
    UniqueFd owned(fd);
    int type = ::ioctl(fd, NS_GET_NSTYPE);
    auto want = static_cast<int>(namespace_flag(ns.type));
    if (type < 0) return fail(Error(ErrorKind::config, errno, "ioctl NS_GET_NSTYPE " + where));
    if (type != want) return fail(ErrorKind::config, EINVAL, where + " is not a " + ns.type + " namespace");
    if (want == CLONE_NEWUSER || want == CLONE_NEWPID || want == CLONE_NEWTIME)
      l.enter_before_clone.emplace_back(fd, want);
    else
      l.plan.join_ns.emplace_back(fd, want);
    l.joined.push_back(std::move(owned));
  }
  return {};
}

}  // namespace kern::bundle
