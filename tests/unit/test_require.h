// KERN_TEST_REQUIRE for unit tests, with the rules of tests/support/kerntest.py: a comma list of
// shell patterns, "all" for every name, a leading '-' excludes. A test that cannot run here calls
// skip_unless_required(): SKIPPED with the reason, or a failure where CI requires the name.
#pragma once

#include <fnmatch.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace kern::testing {

inline bool test_required(const std::string& name) {
  const char* env = std::getenv("KERN_TEST_REQUIRE");
  bool required = false, excluded = false;
  std::stringstream list(env ? env : "");
  std::string p;
  while (std::getline(list, p, ',')) {
    bool negate = !p.empty() && p[0] == '-';
    if (negate) p.erase(0, 1);
    if (p == "all") p = "*";
    if (p.empty() || fnmatch(p.c_str(), name.c_str(), 0) != 0) continue;
    (negate ? excluded : required) = true;
  }
  return required && !excluded;
}

}  // namespace kern::testing

// Inside a TEST body: returns from it, skipped or failed.
#define KERN_SKIP_UNLESS_REQUIRED(name, reason)                                              \
  do {                                                                                       \
    if (::kern::testing::test_required(name)) {                                              \
      ADD_FAILURE() << "required by KERN_TEST_REQUIRE (" << (name) << "): " << (reason);     \
      return;                                                                                \
    }                                                                                        \
    GTEST_SKIP() << (reason);                                                                \
  } while (0)
