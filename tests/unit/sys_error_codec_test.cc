// The one wire form of kern::Error: everything survives (kind, errno, non-errno code, message,
// hint, context frames) and nothing is parsed back out of printed text; hostile bytes are
// refused; an oversized Error is cut to fit and stays decodable.
#include <gtest/gtest.h>

#include <cerrno>

#include "runtime/sys/error_codec.h"

namespace kern::sys {
namespace {

TEST(ErrorCodec, EverythingSurvivesTheTrip) {
  Error e(ErrorKind::image, 0, "GET https://r.example/v2/: Couldn't connect to server");
  e.with_code("curl", 7);
  e.with_context("pulling busybox");
  e.with_hint("is the registry up?");
  auto d = decode_error(encode_error(e));
  ASSERT_TRUE(d) << d.error().what();
  EXPECT_EQ(d->kind(), ErrorKind::image);
  EXPECT_EQ(d->sys_errno(), 0);
  EXPECT_EQ(d->code(), 7);
  EXPECT_EQ(d->code_domain(), "curl");
  EXPECT_EQ(d->what(), e.what());
  EXPECT_EQ(d->what(), "pulling busybox: GET https://r.example/v2/: Couldn't connect to server (curl error 7)");
  EXPECT_EQ(d->hint(), "is the registry up?");
}

TEST(ErrorCodec, AnErrnoStaysAnErrnoWhateverTheText) {
  // A message that ends like an errno name must not turn into one, nor lose the real one.
  Error e(ErrorKind::setup, EPERM, "mount \"/x: ENOENT\"");
  auto d = decode_error(encode_error(e));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->sys_errno(), EPERM);
  EXPECT_EQ(d->message(), "mount \"/x: ENOENT\"");
  // A derived hint is not frozen into the record: it is derived again on the other side.
  EXPECT_TRUE(d->explicit_hint().empty());
}

TEST(ErrorCodec, TheRawEncoderMatchesTheErrorOne) {
  char a[512], b[512];
  size_t na = encode_error_raw(a, sizeof a, ErrorKind::workload, ENOENT, "execve \"x\"");
  size_t nb = encode_error(Error(ErrorKind::workload, ENOENT, "execve \"x\""), b, sizeof b);
  ASSERT_EQ(na, nb);
  EXPECT_EQ(std::string(a, na), std::string(b, nb));
}

TEST(ErrorCodec, TruncatedAndTrailingBytesAreRefused) {
  std::string s = encode_error(Error(ErrorKind::setup, EIO, "read"));
  for (size_t cut = 0; cut < s.size(); ++cut) EXPECT_FALSE(decode_error(s.substr(0, cut))) << cut;
  EXPECT_FALSE(decode_error(s + "x"));
}

TEST(ErrorCodec, UnknownVersionOrKindIsRefused) {
  std::string s = encode_error(Error(ErrorKind::setup, EIO, "read"));
  std::string v = s;
  v[0] = 9;
  EXPECT_FALSE(decode_error(v));
  std::string k = s;
  k[1] = 42;
  EXPECT_FALSE(decode_error(k));
}

TEST(ErrorCodec, AnOversizedErrorIsCutToFitAndStillDecodes) {
  Error e(ErrorKind::config, ENOENT, std::string(10000, 'm'));
  for (int i = 0; i < 40; ++i) e.with_context(std::string(300, 'c'));
  char buf[1024];
  size_t n = encode_error(e, buf, sizeof buf);
  ASSERT_GT(n, 0u);
  ASSERT_LE(n, sizeof buf);
  auto d = decode_error(std::string_view(buf, n));
  ASSERT_TRUE(d) << d.error().what();
  EXPECT_EQ(d->kind(), ErrorKind::config);
  EXPECT_EQ(d->sys_errno(), ENOENT);
  EXPECT_FALSE(d->message().empty());
}

TEST(ErrorCodec, TooSmallABufferGivesNothing) {
  char buf[4];
  EXPECT_EQ(encode_error_raw(buf, sizeof buf, ErrorKind::setup, 0, "x"), 0u);
}

}  // namespace
}  // namespace kern::sys
