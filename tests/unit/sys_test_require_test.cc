// The unit tests' reading of KERN_TEST_REQUIRE (tests/unit/test_require.h) follows kerntest.py.
#include <stdlib.h>

#include "tests/unit/test_require.h"

namespace {

using kern::testing::test_required;

TEST(TestRequire, PatternsAllAndExclusions) {
  const char* old = std::getenv("KERN_TEST_REQUIRE");
  std::string saved = old ? old : "";
  ::unsetenv("KERN_TEST_REQUIRE");
  EXPECT_FALSE(test_required("block-device"));
  ::setenv("KERN_TEST_REQUIRE", "all,-outside-bpf,-outside-x32", 1);
  EXPECT_TRUE(test_required("block-device"));
  EXPECT_FALSE(test_required("outside-bpf"));
  ::setenv("KERN_TEST_REQUIRE", "outside-*", 1);
  EXPECT_TRUE(test_required("outside-x32"));
  EXPECT_FALSE(test_required("block-device"));
  ::setenv("KERN_TEST_REQUIRE", "all,-block-*", 1);
  EXPECT_FALSE(test_required("block-device"));
  if (old) ::setenv("KERN_TEST_REQUIRE", saved.c_str(), 1);
  else ::unsetenv("KERN_TEST_REQUIRE");
}

}  // namespace
