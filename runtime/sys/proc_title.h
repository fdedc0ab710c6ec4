// What a process shows of itself in /proc/PID/cmdline and /proc/PID/environ. Any process.
#pragma once

namespace kern::sys {

// Overwrites the calling process's argument and environment strings in place (the memory
// /proc/PID/cmdline and /proc/PID/environ read), so that they show `title` and nothing else.
// Box init calls it: it is a copy of kern, whose command line names host paths, and every
// process in the box can read PID 1's cmdline. The kernel lets only CAP_SYS_RESOURCE move the
// areas (PR_SET_MM), so their size stays; what was in them is zeroed. Returns 0 or an errno.
// Allocates nothing; after it, getenv() finds nothing.
int scrub_process_title(const char* title) noexcept;

}  // namespace kern::sys
