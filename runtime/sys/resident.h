// The resident memory of a process that waits: kern's launcher and box init touch a good part of
// kern's code while a box starts and almost none of it while the box runs.
#pragma once

namespace kern::sys {

// Unmaps from this process the pages of code and read-only data (the PT_LOAD segments that are
// not writable, of kern and of the libc and dynamic loader it is linked with) that it has touched, so that a process that only waits from now on
// does not keep megabytes of code resident. The pages stay in the page cache, shared with every
// other kern process: what the process runs next is faulted back in from there (about a
// microsecond a fault). Writable segments are left alone.
void drop_code_pages();

// How long a waiting process lets a box run before it drops its code pages: a box that ends
// sooner (most of the short ones) pays nothing for the faults that follow.
inline constexpr int kDropCodePagesAfterMs = 100;

}  // namespace kern::sys
