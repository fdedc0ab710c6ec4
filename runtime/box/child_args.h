// What the box's processes need after clone, all computed by the parent before clone so that
// the child only walks precomputed data (DESIGN: plan in the parent, execute in the child).
// The child is a fork-like copy of the single-threaded launcher, so it reads these structures
// directly.
#pragma once

#include <sys/ioctl.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "runtime/launch_plan.h"
#include "runtime/box/mount_exec.h"
#include "runtime/mount_plan.h"
#include "runtime/seccomp_filter.h"
#include "runtime/timing.h"

namespace kern {

// How far the workload got, in memory it shares with box init (CLONE_VM): box init reads it when
// the workload's spawn returns, to tell an execve that succeeded from a death before it.
enum WorkloadStage : int { stage_setup = 0, stage_exec = 1, stage_failed = 2 };

struct ChildArgs {
  const ExecPlan* exec = nullptr;
  const std::vector<MountStep>* plan = nullptr;
  MountContext mount_ctx;
  const std::string* hostname = nullptr;
  const LaunchPlan* launch = nullptr;  // the whole plan: its named mode fields (console_at_dev, ...)
  // The OCI mode's created state: a listening unix socket. Box init, once the root and the
  // terminal are ready, says `held` on the channel and waits for one connection on it (the
  // `start` verb), which becomes its channel from then on; then it spawns the workload.
  int hold_fd = -1;
  bool loopback_up = false;
  // The network namespace comes from the helper over this socket (netns_helper.h): clone3 made
  // none, and the box's first process joins it before its sysfs mount. -1: clone3 made it.
  int netns_sock = -1;
  // The cgroup namespace is made by the child once the parent has moved it into every cgroup it
  // joins by pid (StartContext::join_cgroup_dirs: cgroup v1), so its root is the box's there too.
  bool unshare_cgroupns = false;
  int sync_fd = -1;     // read end: one byte from the parent once the id maps are written
  int channel_fd = -1;  // write end of the box's typed channel (close-on-exec)
  int* pass_tmp = nullptr;  // exec->pass_fds.size() + 2 ints: the temporary fds, then the kept ones
  volatile int* stage = nullptr;  // WorkloadStage, set by box init before the spawn
  int pty_slave = -1;   // -t: the terminal the workload gets as its controlling tty (set by init)
  int pty_sock = -1;    // -t: where init sends the master of the terminal it makes in the box
  bool has_winsize = false;
  struct winsize winsize {};  // -t: the caller's window size, for the box's terminal
  TimingPage* timing = nullptr;  // instrumentation only: never read to decide anything
  int last_cap = 40;    // /proc/sys/kernel/cap_last_cap, read by the parent
  SeccompProgram seccomp{};
  int audit_sock = -1;  // allowlist-audit: where the workload sends its filter's listener
  bool seccomp_notify = false;  // LaunchPlan::seccomp_notify: the listener goes on channel_fd

  // execve inputs, NUL-terminated arrays into exec's strings.
  std::vector<char*> argv;
  std::vector<char*> envp;
  // exec->script_shell, a free slot for the candidate, argv[1...], NULL (empty: no retry). The
  // workload writes the slot before its last execve, so nothing is allocated after fork.
  mutable std::vector<char*> script_argv;
};

// The box's first process: PID 1 of its pid namespace. Never returns.
[[noreturn]] void child_main(const ChildArgs& args);

// After the root is built: PID 1 forks the workload, forwards signals to it, reaps everything
// and exits with the workload's status. Never returns.
[[noreturn]] void run_box_init(const ChildArgs& args);

// The workload process, forked by box init: session, fds, cwd, ids, capabilities, seccomp,
// execve. Never returns.
[[noreturn]] void exec_workload(const ChildArgs& args);

}  // namespace kern
