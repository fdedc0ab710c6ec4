// kern::Error formatting and Result plumbing.
#include <gtest/gtest.h>

#include "runtime/sys/error.h"
#include "runtime/sys/log.h"

namespace kern {
namespace {

Result<int> half(int x) {
  if (x % 2 != 0) return fail(ErrorKind::usage, 0, "odd: " + std::to_string(x));
  return x / 2;
}

Result<int> quarter(int x) {
  KERN_TRY_ASSIGN(int h, half(x));
  auto r = half(h);
  if (!r) return fail(std::move(r).error().with_context("halving " + std::to_string(h)));
  return *r;
}

TEST(Error, FramesOuterFirstThenErrnoInWordsAndName) {
  Error e(ErrorKind::setup, ENOENT, "openat \"usr/lib/x\"");
  e.with_context("unpacking layer sha256:ab12");
  e.with_context("pulling busybox");
  EXPECT_EQ(e.what(),
            "pulling busybox: unpacking layer sha256:ab12: openat \"usr/lib/x\": no such file or directory (ENOENT)");
}

TEST(Error, ErrnoWords) {
  EXPECT_EQ(errno_words(EPERM), "operation not permitted (EPERM)");
  EXPECT_EQ(errno_words(ENOSYS), "function not implemented (ENOSYS)");
  EXPECT_EQ(errno_words(EACCES), "permission denied (EACCES)");
  EXPECT_EQ(errno_words(98765), "errno 98765");
}

TEST(Error, ResultPropagatesWithContext) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what(), "halving 3: odd: 3");
  EXPECT_EQ(r.error().kind(), ErrorKind::usage);
}

TEST(Error, HintForDisabledUserNamespaces) {
  Error e(ErrorKind::host_unsupported, EPERM, "clone");
  EXPECT_NE(e.hint().find("unprivileged_userns_clone"), std::string::npos);
}

// A full disk is not a user namespace limit: ENOSPC gets no hint of its own, only the place
// that knows the cause sets one (clone3 does).
TEST(Error, NoGuessedHintForENOSPC) {
  EXPECT_EQ(Error(ErrorKind::setup, ENOSPC, "write \"/tmp/x\"").hint(), "");
  EXPECT_EQ(Error(ErrorKind::image, ENOSPC, "unpacking layer").hint(), "");
}

// A code that is not an errno is shown in its own words, never as "errno 100007".
TEST(Error, ANonErrnoCodeIsShownByItsDomain) {
  Error e = Error(ErrorKind::image, 0, "GET https://r/v2/: Couldn't connect to server").with_code("curl", 7);
  EXPECT_EQ(e.what(), "GET https://r/v2/: Couldn't connect to server (curl error 7)");
  EXPECT_EQ(e.sys_errno(), 0);
  EXPECT_EQ(e.what().find("errno"), std::string::npos);
}

TEST(Log, SanitizeEscapesControlCharacters) {
  EXPECT_EQ(log::sanitize("a\x1b[31mb\r"), "a\\x1b[31mb\\x0d");
  EXPECT_EQ(log::sanitize("tab\tok"), "tab\tok");
}

}  // namespace
}  // namespace kern
