// BoxHandle: a started box, seen from the process that started it (launcher side).
//
//   LaunchPlan plan = prepare(spec);                       // pure
//   KERN_TRY_ASSIGN(BoxHandle box, BoxHandle::start(plan, ctx));
//   ... box.pidfd() to poll, box.signal(SIGTERM), box.pty_master() ...
//   KERN_TRY_ASSIGN(BoxExit e, box.reap());                // once box init has exited
//
// start() opens what the box will use (bind sources, device nodes, the cgroup with its limits),
// clones box init into the namespaces (and the cgroup), writes the id maps, lets it go and reads
// its channel until box init says exec_ok, or setup_failed, or the channel ends without it. It
// returns once the workload runs; nothing is left behind when it fails. Everything that runs a
// box is a client of the handle: the foreground `kern box` (launcher.cc), a detached box's
// supervisor (runtime/detached/), warm kernels.
// Teardown is written once, here: kill what is left, reap, remove the cgroup and scratch dirs.
#pragma once

#include <sys/ioctl.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cgroup/box_cgroup.h"
#include "runtime/launch_plan.h"
#include "runtime/sys/error.h"
#include "runtime/timing.h"

namespace kern {

struct StartContext {
  std::string runtime_dir;  // kern's live state: where the cgroup subtree is remembered
  std::string scratch_dir;  // the box's scratch mount point (from its registry record)
  TimingPage* timing = nullptr;  // instrumentation, never read to decide anything
  std::optional<struct winsize> winsize;  // -t: the caller's terminal size
  // Called with box init's pidfd once its namespaces exist and its id maps are written, before
  // it is let go (so before the workload runs); a failure fails the start. E.g. --egress-allow's
  // relay joins the box's network namespace here.
  std::function<Result<void>(int box_pidfd)> before_release;
  // The OCI mode. hold_fd: a listening unix socket; start() returns once box init has built the
  // root and waits on it (channel `held`), before the workload is spawned (runtime/box/child_args.h).
  // into_cgroup_fd: the cgroup the caller made for the box (plan.cgroup.policy must be none),
  // which box init is cloned into.
  // join_cgroup_dirs: cgroup directories box init is also moved into (its pid written to their
  // cgroup.procs) before it is let go: an OCI container's cgroup v1 hierarchies.
  int hold_fd = -1;
  int into_cgroup_fd = -1;
  std::vector<std::string> join_cgroup_dirs;
  // The OCI mode: called when box init's first process has mounted the root and waits to enter
  // it (channel before_pivot: the hooks that run before pivot_root), with its pid and pidfd; it
  // goes on once this returns, and a failure fails the start.
  std::function<Status(pid_t pid, int pidfd)> before_pivot;
};

// A best-effort step box init's first process could not do (channel step_skipped).
struct SkippedStep {
  std::string step;
  int err = 0;
};

struct BoxExit {
  int exit_code = 0;  // box init's code, which mirrors the workload's (128+N for a signal N)
  int signal = 0;     // N when the workload (or box init) was killed by signal N
};

class BoxHandle {
 public:
  static Result<BoxHandle> start(const LaunchPlan& plan, const StartContext& ctx);

  BoxHandle(BoxHandle&&) noexcept;
  BoxHandle& operator=(BoxHandle&&) noexcept;
  ~BoxHandle();

  pid_t pid() const;
  int pidfd() const;       // readable once box init has exited
  int pty_master() const;  // -t, else -1
  // allowlist-audit: the workload's seccomp listener (runtime/seccomp_audit.h), once; else empty.
  UniqueFd take_audit_listener();
  const BoxCgroup* cgroup() const;
  const std::vector<SkippedStep>& skipped() const;

  // Sends `sig` to box init (which forwards it to the workload). 0 or the errno.
  int signal(int sig) const;
  // Waits for box init to exit, reaps it and takes the workload's status from the channel.
  Result<BoxExit> reap();
  // Kills whatever still runs, reaps it, removes the cgroup and the scratch dirs. Idempotent;
  // the destructor calls it.
  void teardown();
  // Lets the box go on without this handle (the OCI mode's create: the engine owns it from now
  // on): nothing is killed or removed, the fds are closed. Teardown does nothing afterwards.
  void release();

 private:
  struct State;
  explicit BoxHandle(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace kern
