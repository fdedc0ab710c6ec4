// Whether this process can load a seccomp filter at all: qemu-user (the unit tests of a cross
// build) refuses seccomp(2) and PR_SET_SECCOMP for its guest. Tests that load a filter skip by
// the name seccomp-filter-load when it cannot (tests/unit/test_require.h).
#pragma once

#include <string>
#include <thread>

#include "runtime/seccomp_filter.h"
#include "tests/unit/test_require.h"

namespace kern::testing {

// Why a filter cannot be loaded here, or "" when it can. The probe loads one in a thread of its
// own, which the filter (and no_new_privs) confine alone and which then ends: it changes nothing
// for the tests that follow.
inline std::string seccomp_filter_load_unavailable() {
  static const std::string why = [] {
    int err = 0;
    std::thread([&err] { err = install_seccomp_raw(seccomp_program(SeccompMode::denylist)); }).join();
    if (err == 0) return std::string();
    return "loading a seccomp filter fails here (" + errno_name(err) +
           "; qemu-user refuses seccomp for its guest): nothing to check the filter's answers with";
  }();
  return why;
}

}  // namespace kern::testing

// Inside a TEST body: skipped by name (or failed where required) when no filter can be loaded.
#define KERN_SKIP_WITHOUT_SECCOMP_FILTERS()                                                   \
  do {                                                                                       \
    std::string why_ = ::kern::testing::seccomp_filter_load_unavailable();                   \
    if (!why_.empty()) KERN_SKIP_UNLESS_REQUIRED("seccomp-filter-load", why_);               \
  } while (0)
