// For the kern.toml unit tests: checks a text as `kern validate` checks a file (parse, extends,
// validation, notes), through a temporary file that is removed again.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "profiles/profile_loader.h"

namespace kern::profiles::testing {

inline Result<LoadOutcome> check_text(const std::string& text, const DeviceInspector& inspect) {
  char path[] = "/tmp/kern-profiles-test.XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  auto o = check_profiles_file(path, inspect);
  ::unlink(path);
  return o;
}

}  // namespace kern::profiles::testing
