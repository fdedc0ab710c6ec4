// prepare(); see launch_plan.h. Launcher side, pure.
#include "runtime/launch_plan.h"

#include <sched.h>

#include "runtime/apparmor.h"

namespace kern {

unsigned long long box_clone_flags(const BoxSpec& spec) {
  unsigned long long f = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC |
                         CLONE_NEWCGROUP;
  if (spec.net != NetMode::host) f |= CLONE_NEWNET;
  if (spec.pod) f &= ~(CLONE_NEWUSER | static_cast<unsigned long long>(spec.pod->ns_flags));
  return f;
}

std::vector<std::string> exec_candidates(const std::string& arg0, const std::vector<std::string>& env) {
  if (arg0.find('/') != std::string::npos) return {arg0};
  std::string path = kDefaultBoxPath;
  for (const auto& kv : env)
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find(':', pos);
    if (next == std::string::npos) next = path.size();
    std::string dir = path.substr(pos, next - pos);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + arg0);
    pos = next + 1;
  }
  return out;
}

LaunchPlan prepare(const BoxSpec& spec) {
  LaunchPlan p;
  p.name = spec.name;
  p.clone_flags = box_clone_flags(spec);
  p.exec.argv = spec.argv;
  p.exec.env = spec.env;
  if (!spec.argv.empty()) p.exec.candidates = exec_candidates(spec.argv[0], spec.env);
  p.exec.cwd = spec.cwd;
  p.exec.creds = box_credentials(spec.uid, spec.gid, spec.user_set, spec.caps_keep);
  p.exec.nice = spec.limits.nice;
  p.exec.rlimits = spec.rlimits;
  p.exec.pass_fds = spec.pass_fds;
  if (!spec.apparmor_profile.empty()) p.exec.apparmor_exec = apparmor_exec_request(spec.apparmor_profile);
  p.mounts.steps = build_mount_plan(spec);
  p.mounts.binds = spec.binds;
  p.mounts.devices = spec.devices;
  p.cgroup.policy = spec.cgroup_policy;
  p.cgroup.limits = spec.limits;
  p.cgroup.default_caps_warning = spec.default_caps_warning;
  p.seccomp = seccomp_program(spec.seccomp);
  p.seccomp_name = seccomp_mode_name(spec.seccomp);
  p.seccomp_audit = spec.seccomp == SeccompMode::allowlist_audit;
  p.uid_range = spec.uid_range;
  p.hostname = spec.hostname;
  p.loopback_up = spec.net != NetMode::host && !spec.pod;
  if (spec.pod) {
    p.join_holder = spec.pod->holder_pid;
    p.join_holder_start = spec.pod->holder_start;
    p.join_holder_ns = spec.pod->ns_flags;
    p.sets_hostname = (spec.pod->ns_flags & CLONE_NEWUTS) == 0;  // a pod's boxes share its name
  }
  p.tty = spec.tty;
  p.interactive = spec.interactive;
  return p;
}

}  // namespace kern
