// The working directory of a box's process (the workload, kern exec's process, an OCI process):
// what is refused before launch, and the check the process makes after its chdir. The refusal
// is pure (every client calls it on the path it was given); the check runs in the box's process.
#pragma once

#include <string_view>

#include "runtime/sys/error.h"

namespace kern {

// Refuses a working directory inside a process's own procfs directory: /proc/self/...,
// /proc/thread-self/..., /proc/<pid>/... . There a chdir follows magic links (fd/N, cwd, root)
// to whatever the process has open, which is how a working directory escapes the root (runc's
// CVE-2024-21626). `what` names the source in the message ("-w", "process.cwd", ...). The
// path is read as the box's process reads it: empty and "." components skipped, ".." lexical.
Status check_box_cwd(std::string_view path, std::string_view what);

// In the box's process, after its chdir: 0 when the kernel's getcwd names a directory under
// the process's root, else the errno to report (EXDEV for a directory outside it, which the
// kernel answers as "(unreachable)/..." or with ENOENT). Allocates nothing.
int cwd_inside_root_raw();

}  // namespace kern
