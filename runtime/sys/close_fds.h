// Closing every descriptor but a few, in a process that must not allocate (a child after clone,
// a workload sharing box init's memory). Runs in whichever process calls it.
#pragma once

#include <cstddef>

namespace kern::sys {

// Closes every fd from 3 up except the `n` listed in `keep` (negative entries are ignored;
// `keep` is sorted in place). 0 or the errno of close_range (Linux 5.9+, which kern needs).
int close_fds_except_raw(int* keep, size_t n);

}  // namespace kern::sys
