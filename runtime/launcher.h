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
// With `kept_scratch` (and spec.upper_on_host), the box's upper, work and new root are made in that
// directory instead of the registration's scratch dir, and stay there for the caller to read
// (kern build's RUN).
Result<int> run_box(const BoxSpec& spec, TimingPage* timing, const std::string& kept_scratch = {});

}  // namespace kern
