// The foreground box: `kern box` without -d. Launcher side (the kern process), a client of the
// BoxHandle: claim the name -> prepare -> start -> record -> started fd, report fd -> supervise
// -> reap -> exited record -> tear down -> exit code.
#pragma once

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"
#include "runtime/timing.h"

namespace kern {

// Runs the box to completion. Returns the box's exit code (the workload's own, or 128+N), or an
// Error when the box could not be started (nothing is left behind then).
Result<int> run_box(const BoxSpec& spec, TimingPage* timing);

}  // namespace kern
