// prepare(BoxSpec) -> LaunchPlan: everything a box is, turned into what each process of the
// launch needs, before anything is created. Pure (reads no file, makes no call), so that the
// whole plan is unit-tested; runs in the launcher. The box's processes receive only the exec
// and mount parts (through ChildArgs); the caller's plumbing (started fd, report fd, timing,
// the name's registry record) stays with the caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/caps.h"
#include "runtime/mount_plan.h"
#include "runtime/seccomp_filter.h"

namespace kern {

// What the workload process does between box init's spawn and its execve.
struct ExecPlan {
  std::vector<std::string> argv;        // argv[0] as the user gave it
  std::vector<std::string> env;         // complete: nothing of the host's
  std::vector<std::string> candidates;  // paths execve tries in order (argv[0] along $PATH)
  // A candidate execve refuses with ENOEXEC (a script without "#!") runs as
  // `script_shell CANDIDATE ARG...`, as execvp(3) does; empty: no such retry.
  std::string script_shell = "/bin/sh";
  std::string cwd = "/";
  Credentials creds;
  // setpriority(2) of the workload (a [[vcpu]] nice); a lowering the host refuses is left as
  // is (the launcher warned before the start).
  std::optional<int> nice;
  std::vector<std::pair<int, int>> pass_fds;  // host fd -> box fd
  // The umask (OCI mode only) and the rlimits (process.rlimits, kern box --ulimit).
  int umask = -1;  // -1: left as inherited
  std::vector<RlimitSetting> rlimits;
  // The seccomp stage. A kern box always loads its filter, with no_new_privs. An OCI process
  // loads one only when the config has linux.seccomp (filter_required false), and without
  // noNewPrivileges loads it before the id switch, while CAP_SYS_ADMIN is still held (the
  // kernel's condition for a filter without no_new_privs), so it also covers that switch.
  bool filter_required = true;
  bool no_new_privs = true;
  long personality = -1;  // linux.personality: PER_LINUX or PER_LINUX32; -1 left as inherited
  // "exec PROFILE" (apparmor_exec_request) when the workload enters an AppArmor profile at its
  // execve; "" for none.
  std::string apparmor_exec;
};

// One line of an explicit uid_map/gid_map.
struct IdMapLine {
  uint32_t inside = 0, outside = 0, count = 0;
};

// What the box's first process does before it becomes init.
struct MountPlan {
  std::vector<MountStep> steps;
  std::vector<BindMount> binds;      // sources the launcher opens (and creates, if ephemeral)
  std::vector<DeviceGrant> devices;  // nodes the launcher opens and checks by identity
  // The entries the config-root steps name (the OCI mode: config.json's root), or null. Owned by
  // whoever made the plan (bundle::OciLaunch), which outlives the launch.
  const ConfigRoot* config = nullptr;
};

struct CgroupPlan {
  CgroupPolicy policy = CgroupPolicy::best_effort;
  Limits limits;
  DefaultCapsWarning default_caps_warning;
};

struct LaunchPlan {
  std::string name;
  unsigned long long clone_flags = 0;
  ExecPlan exec;
  MountPlan mounts;
  CgroupPlan cgroup;
  SeccompProgram seccomp{};
  // What `seccomp` is, for --plan (a static text: the start path pays nothing for it): a kern
  // box's mode, or the OCI config's filter (plan_text adds its size).
  const char* seccomp_name = "";
  // KERN_SECCOMP=allowlist-audit: the workload hands its filter's listener to the handle.
  bool seccomp_audit = false;
  // The OCI mode's SCMP_ACT_NOTIFY: the workload loads `seccomp` with a listener and sends it on
  // its channel (a seccomp_listener frame) for the caller to hand to the agent.
  bool seccomp_notify = false;
  bool uid_range = false;  // id maps through newuidmap/newgidmap
  std::string hostname;
  bool loopback_up = false;  // the box has its own network namespace, whose lo starts down
  bool tty = false;
  bool interactive = false;

  // The OCI mode (runtime/bundle/oci_plan.h); a kern box leaves these at their defaults.
  // The terminal of tty (made by box init) is bound at /dev/console and becomes init's stdio:
  // the OCI mode's process.terminal, where the creator's stdio are not the container's.
  bool console_at_dev = false;
  bool sets_hostname = true;       // false: the uts namespace keeps the name it has (empty hostname)
  bool die_with_parent = true;     // PR_SET_PDEATHSIG: false when the box outlives its creator
  // Box init becomes the workload at its release (it execs the process itself instead of
  // spawning it), so the process is pid 1 of its namespace, as with runc: signals reach it as
  // sent (a pid 1 without a handler ignores the catchable ones), its exit is the container's,
  // and an engine that wants an init adds its own (--init, catatonit, tini). A kern box keeps
  // box init as the supervisor that forwards signals and reaps.
  bool init_becomes_workload = false;
  bool explicit_id_maps = false;   // uid_map/gid_map below, instead of kern's own maps
  std::vector<IdMapLine> uid_map, gid_map;
  std::string domainname;          // empty: left as is
  // What box init shows in /proc/PID/cmdline; the OCI mode names the container there, so a
  // verb can tell its container's process from another's (bundle::own_process).
  std::string init_title = "kern-init";
  // Namespaces joined by the box's first process before anything else: (fd, CLONE_NEW* type).
  std::vector<std::pair<int, int>> join_ns;
  // --pod, --network NAME: the holder whose user namespace, and in it `join_holder_ns`, the box
  // is cloned into (0: none). The launcher itself never enters them (runtime/pod_clone.h).
  pid_t join_holder = 0;
  uint64_t join_holder_start = 0;
  int join_holder_ns = 0;
};

LaunchPlan prepare(const BoxSpec& spec);

// The clone flags a spec asks for (also for --plan).
unsigned long long box_clone_flags(const BoxSpec& spec);

// argv[0] as given when it has a '/', else each $PATH directory of `env` (or the default box
// PATH) joined with it, in order; an empty PATH entry is the current directory.
std::vector<std::string> exec_candidates(const std::string& arg0, const std::vector<std::string>& env);

}  // namespace kern
