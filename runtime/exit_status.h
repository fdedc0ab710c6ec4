// The exit-status rules, pure: how a wait status becomes kern's exit code (kern-box(1)).
// Used by box init (PID 1) to mirror the workload, and by the launcher for the box as a whole.
#pragma once

namespace kern {

// A wait(2) status -> the code a shell would report: the exit code, or 128+N for signal N.
int exit_code_from_wait_status(int wstatus);

}  // namespace kern
