// See close_fds.h.
#include "runtime/sys/close_fds.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace kern::sys {

int close_fds_except_raw(int* keep, size_t n) {
  for (size_t i = 1; i < n; ++i)  // insertion sort: a handful of entries, nothing allocated
    for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  unsigned from = 3;
  for (size_t i = 0; i < n; ++i) {
    if (keep[i] < static_cast<int>(from)) continue;
    unsigned fd = static_cast<unsigned>(keep[i]);
    if (fd > from && ::syscall(SYS_close_range, from, fd - 1, 0u) != 0) return errno;
    from = fd + 1;
  }
  return ::syscall(SYS_close_range, from, ~0u, 0u) == 0 ? 0 : errno;
}

}  // namespace kern::sys
