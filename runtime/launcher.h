// The launcher: turns a BoxSpec into a running box and waits for it. Parent side (the kern
// process). The sequence:
//   claim the name -> open bind sources and device nodes -> cgroup with limits -> mount plan
//   -> clone3 into the namespaces (and the cgroup) -> id maps -> "go" -> channel EOF = exec
//   -> read enforcement back -> started fd, report fd -> supervise -> tear down -> exit code.
#pragma once

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"
#include "runtime/timing.h"

namespace kern {

// Runs the box to completion. Returns the box's exit code (the workload's own, or 128+N), or an
// Error when the box could not be started (nothing is left behind then).
Result<int> run_box(const BoxSpec& spec, TimingPage* timing);

// The clone flags a spec asks for, for --plan.
unsigned long long box_clone_flags(const BoxSpec& spec);

}  // namespace kern
