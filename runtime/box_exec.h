// `kern exec`: a new process inside a running box, under exactly the lockdown of the box's
// workload. Three processes take part:
//   kern exec (the caller's side, "exec side" below): finds the box, checks that its init is
//     the one the lockdown record names, clones the joiner into the box's cgroup, relays the
//     terminal and signals, waits, and exits with the process's code;
//   the joiner (child of kern exec, host pid namespace): non-dumpable, with only its own fds,
//     setns into the box's namespaces through the pidfd of init's first child (box_join.h), then
//     spawns the process as kern exec's own child (CLONE_PARENT: a pid namespace applies to
//     children only) and exits;
//   the process itself (in the box's pid namespace): dies with kern exec (PR_SET_PDEATHSIG),
//     makes its terminal in the box's devpts for -t, then the workload's own sequence
//     (exec_workload: session, fds, cwd, ids and capabilities, no_new_privs and seccomp, execve).
// Its orphans re-parent to box init (the pid namespace's init), which reaps them.
#pragma once

#include <sys/ioctl.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/box_lockdown.h"
#include "runtime/launch_plan.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

// What the exec line changes of the workload's lockdown; everything else is the box's.
struct ExecOverrides {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // complete: the box's environment with exec's -e merged in
  std::optional<std::string> cwd;
  std::optional<std::pair<uid_t, gid_t>> user;
};

// Pure: the workload's ExecPlan for an exec into a box of lockdown `l`.
ExecPlan exec_plan_for(const BoxLockdown& l, const ExecOverrides& o);

// A running box, checked: its init is alive and is the process the lockdown record names.
struct ExecTarget {
  std::string name;
  std::string cgroup;  // the box's cgroup directory, empty when it runs without one
  // Further cgroup directories the process is moved into before it runs (an OCI container's
  // cgroup v1 hierarchies).
  std::vector<std::string> join_cgroup_dirs;
  BoxLockdown lockdown;
  // The pidfd the joiner enters the box's namespaces through: box init's first child, or box
  // init itself (runtime/box_join.h says why), and that process's pid.
  UniqueFd join_pidfd;
  pid_t join_pid = 0;
  // The OCI mode: the container's own program (compiled from its config.json), instead of the
  // one lockdown.seccomp names; {nullptr, 0} for none.
  std::optional<SeccompProgram> seccomp;
  // The OCI mode's SCMP_ACT_NOTIFY rules: the process loads `seccomp` with a listener and sends
  // it back (the channel is then a unix socket); this hands it to the agent (its pid, the fd).
  std::function<Status(pid_t, int)> seccomp_agent;
};

// Exec side. Fails (kind config) when no live box has that name, or when its record does not
// match its running init.
Result<ExecTarget> find_exec_target(const std::string& runtime_dir, const std::string& name);

// The joiner's start, kern exec's and kern cp's: a child (0 in it, its pid here) cloned into the
// box's cgroup, so that the box's memory and pids caps count what it does. The child's next step
// is enter_box_raw (box_join.h); until then it holds the cgroup's fd, which that step closes.
Result<pid_t> start_box_joiner(const ExecTarget& target);

struct ExecTerminal {
  bool tty = false;          // -t: a terminal of the box's devpts, relayed to the caller's
  bool interactive = false;  // -i: the caller's stdin is relayed to it
  // The terminal's size (the OCI process.consoleSize); without it, the caller's terminal's.
  std::optional<struct winsize> size;
};

// Exec side: runs `plan` in the box and returns its exit code (128+N for a signal N). An Error
// of kind workload is an execve failure (126/127), anything else a failure of kern exec.
// The OCI mode's `exec --detach`: the process outlives the verb (no parent-death signal; an
// engine's subreaper adopts it). on_started gets its pid and, with a terminal, the master once its
// execve succeeded; run_exec then returns 0 without waiting. Without `enabled`, on_started (when
// set) is still called, and run_exec waits as usual.
struct ExecDetached {
  bool enabled = false;
  std::function<Status(pid_t pid, int pty_master)> on_started;
};

Result<int> run_exec(const ExecTarget& target, const ExecPlan& plan, const ExecTerminal& term,
                     const ExecDetached& detached = {});

}  // namespace kern
