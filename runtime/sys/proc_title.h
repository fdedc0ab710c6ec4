// What a process shows of itself in /proc/PID/cmdline and /proc/PID/environ. Any process.
#pragma once

namespace kern::sys {

// Records where the argument and environment strings are (main's argv and the initial
// environ): the memory /proc/PID/cmdline and /proc/PID/environ read. Called once by main.
void remember_process_args(int argc, char** argv) noexcept;

// Overwrites the remembered argument and environment strings in place so that they show
// `title` and nothing else. Box init calls it: it is a copy of kern, whose command line names
// host paths and whose environment is the caller's, and every process in the box can read PID
// 1's cmdline. The kernel lets only CAP_SYS_RESOURCE move the areas (PR_SET_MM), so their size
// stays; what was in them is zeroed. Returns 0, or EINVAL when nothing was remembered.
// Allocates nothing and makes no system call; after it, getenv() finds nothing.
int scrub_process_title(const char* title) noexcept;

}  // namespace kern::sys
