// Whether this process can call openat2(2) at all: qemu-user 7.2, Debian 12's, under which the
// unit tests of a cross build run, does not implement it for its guest (a later release does)
// and answers ENOSYS, so every path kern resolves beneath a root fails there. Tests that resolve paths
// through it skip by the name openat2 when it cannot be called (tests/unit/test_require.h).
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "runtime/sys/error.h"
#include "tests/unit/test_require.h"

namespace kern::testing {

// Why openat2 cannot be called here, or "" when it can: one call that any kernel since 5.6
// answers with a descriptor of "/".
inline std::string openat2_unavailable() {
  static const std::string why = [] {
    struct open_how how = {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
    if (fd >= 0) {
      ::close(static_cast<int>(fd));
      return std::string();
    }
    return "openat2 fails here (" + errno_name(errno) +
           "; qemu-user 7.2 does not implement it for its guest): nothing is resolved beneath a root";
  }();
  return why;
}

}  // namespace kern::testing

// Inside a TEST body (or a fixture's SetUp): skipped by name (or failed where required) when
// openat2 cannot be called.
#define KERN_SKIP_WITHOUT_OPENAT2()                                                           \
  do {                                                                                       \
    std::string why_ = ::kern::testing::openat2_unavailable();                                \
    if (!why_.empty()) KERN_SKIP_UNLESS_REQUIRED("openat2", why_);                           \
  } while (0)
