// kern cp's words, pure: which of SRC and DST is the box's NAME:PATH (docker cp's rule: a ":"
// that no "/" precedes), "-" for a tar stream, and the refusals (no box side, two, a bad name).
#include <gtest/gtest.h>

#include "cli/cp_args.h"

namespace kern::cli {
namespace {

using K = CopyEnd::Kind;

TEST(CopyArgs, TheBoxSideIsNameColonPath) {
  CopyEnd e = copy_end("web:/tmp/x");
  EXPECT_EQ(e.kind, K::box);
  EXPECT_EQ(e.name, "web");
  EXPECT_EQ(e.path, "/tmp/x");
  EXPECT_EQ(copy_end("web:").kind, K::box);
  EXPECT_EQ(copy_end("-").kind, K::stream);
  // A ":" after a "/" is a host path's own; so is a leading ":".
  EXPECT_EQ(copy_end("./a:b").kind, K::host);
  EXPECT_EQ(copy_end("/tmp/a:b").kind, K::host);
  EXPECT_EQ(copy_end(":x").kind, K::host);
  EXPECT_EQ(copy_end("plain").kind, K::host);
}

TEST(CopyArgs, ExactlyOneSideIsABox) {
  auto a = copy_args("web:/etc/hostname", "-");
  ASSERT_TRUE(a) << a.error().what();
  EXPECT_EQ(a->src.kind, K::box);
  EXPECT_EQ(a->dst.kind, K::stream);
  a = copy_args("-", "web:/tmp");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dst.name, "web");
  for (auto [s, d] : {std::pair{"a:/x", "b:/y"}, std::pair{"x", "y"}, std::pair{"-", "-"}, std::pair{"-", "y"}}) {
    auto r = copy_args(s, d);
    ASSERT_FALSE(r) << s << " " << d;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage);
    EXPECT_FALSE(r.error().explicit_hint().empty());
  }
}

TEST(CopyArgs, ABadBoxNameIsRefused) {
  auto r = copy_args("x", "bad name!:/tmp");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("invalid box name"), std::string::npos);
}

}  // namespace
}  // namespace kern::cli
