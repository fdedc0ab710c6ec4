// .dockerignore rules of `kern build` (oci/build/dockerignore.h).
#include <gtest/gtest.h>

#include "oci/build/dockerignore.h"

namespace kern::oci::build {
namespace {

IgnoreRules rules(std::string_view text) {
  auto r = IgnoreRules::parse(text);
  EXPECT_TRUE(r) << (r ? "" : r.error().what());
  return r ? *r : IgnoreRules{};
}

std::string parse_err(std::string_view text) {
  auto r = IgnoreRules::parse(text);
  EXPECT_FALSE(r);
  if (r) return "";
  EXPECT_EQ(r.error().kind(), ErrorKind::usage);
  return r.error().what();
}

TEST(OciDockerignore, CommentsBlankLinesTrimAndClean) {
  auto r = rules(
      "\xEF\xBB\xBF# comment\r\n"
      "\n"
      "   \n"
      "  node_modules  \r\n"
      " # not a comment: it does not start in column 1\n"
      "./build//out/\n"
      "/secrets\n"
      "a/../b\n"
      "../up\n");
  ASSERT_EQ(r.rules().size(), 6u);
  EXPECT_EQ(r.rules()[0].pattern, "node_modules");
  EXPECT_EQ(r.rules()[1].pattern, "# not a comment: it does not start in column 1");
  EXPECT_EQ(r.rules()[2].pattern, "build/out");
  EXPECT_EQ(r.rules()[3].pattern, "secrets");
  EXPECT_EQ(r.rules()[4].pattern, "b");
  EXPECT_EQ(r.rules()[5].pattern, "../up");
  EXPECT_FALSE(r.rules()[0].exception);
  EXPECT_TRUE(r.ignored("node_modules"));
  EXPECT_TRUE(r.ignored("build/out/x.o"));
  EXPECT_FALSE(r.ignored("build/other"));
  EXPECT_TRUE(r.ignored("secrets"));
  EXPECT_TRUE(r.ignored("b/c"));
  EXPECT_FALSE(r.ignored("a/b"));
  EXPECT_FALSE(r.empty());
  EXPECT_TRUE(rules("# only a comment\n\n").empty());
  EXPECT_FALSE(rules("").ignored("anything"));
}

TEST(OciDockerignore, PatternMatchesParentDirectories) {
  auto r = rules("foo\nsub/bar\n");
  EXPECT_TRUE(r.ignored("foo"));
  EXPECT_TRUE(r.ignored("foo/bar"));
  EXPECT_TRUE(r.ignored("foo/bar/baz.txt"));
  EXPECT_FALSE(r.ignored("foobar"));
  EXPECT_FALSE(r.ignored("x/foo"));  // not anchored anywhere but the root
  EXPECT_TRUE(r.ignored("sub/bar/z"));
  EXPECT_FALSE(r.ignored("sub/barn"));
  EXPECT_TRUE(r.ignored("foo/"));
  EXPECT_FALSE(r.ignored(""));
  EXPECT_FALSE(r.ignored("."));
}

TEST(OciDockerignore, DocumentedExample) {
  // The example of Docker's documentation.
  auto r = rules("# comment\n*/temp*\n*/*/temp*\ntemp?\n");
  EXPECT_TRUE(r.ignored("somedir/temporary.txt"));
  EXPECT_TRUE(r.ignored("somedir/temp"));
  EXPECT_TRUE(r.ignored("somedir/subdir/temporary.txt"));
  EXPECT_TRUE(r.ignored("tempa"));
  EXPECT_TRUE(r.ignored("tempb"));
  EXPECT_FALSE(r.ignored("temp"));
  EXPECT_FALSE(r.ignored("tempab"));
  EXPECT_FALSE(r.ignored("temporary.txt"));
  EXPECT_FALSE(r.ignored("a/b/c/temp.txt"));
}

TEST(OciDockerignore, StarAndQuestionStopAtSlash) {
  auto r = rules("*.go\ndocs/?.md\n");
  EXPECT_TRUE(r.ignored("main.go"));
  EXPECT_FALSE(r.ignored("cmd/main.go"));
  EXPECT_TRUE(r.ignored("docs/a.md"));
  EXPECT_TRUE(r.ignored("docs/\xC3\xA9.md"));  // ? is one character, not one byte
  EXPECT_FALSE(r.ignored("docs/ab.md"));
  EXPECT_FALSE(r.ignored("docs/x/a.md"));
}

TEST(OciDockerignore, DoubleStar) {
  auto r = rules("**/*.pyc\nlogs/**\na/**/z\n");
  EXPECT_TRUE(r.ignored("x.pyc"));
  EXPECT_TRUE(r.ignored("pkg/sub/x.pyc"));
  EXPECT_FALSE(r.ignored("pkg/x.py"));
  EXPECT_TRUE(r.ignored("logs/a"));
  EXPECT_TRUE(r.ignored("logs/a/b/c"));
  EXPECT_FALSE(r.ignored("logs"));  // logs/** needs something below logs
  EXPECT_TRUE(r.ignored("a/z"));
  EXPECT_TRUE(r.ignored("a/b/c/z"));
  EXPECT_TRUE(r.ignored("a/b/z/file"));
  EXPECT_FALSE(r.ignored("a/bz"));
  EXPECT_TRUE(rules("**").ignored("any/thing"));
}

TEST(OciDockerignore, ClassesAndEscapes) {
  auto r = rules("file[0-9].txt\nx[^ab]y\n\\*star\nq\\?\n[]]z\nd[a-c-]\n");
  EXPECT_TRUE(r.ignored("file7.txt"));
  EXPECT_FALSE(r.ignored("filex.txt"));
  EXPECT_TRUE(r.ignored("xcy"));
  EXPECT_FALSE(r.ignored("xay"));
  EXPECT_TRUE(r.ignored("*star"));
  EXPECT_FALSE(r.ignored("astar"));
  EXPECT_TRUE(r.ignored("q?"));
  EXPECT_FALSE(r.ignored("qx"));
  EXPECT_TRUE(r.ignored("]z"));
  EXPECT_TRUE(r.ignored("d-"));
  EXPECT_TRUE(r.ignored("db"));
  EXPECT_FALSE(r.ignored("dd"));
  // Regex metacharacters are ordinary.
  auto m = rules("a.b\n(x)+|{y}$\n");
  EXPECT_TRUE(m.ignored("a.b"));
  EXPECT_FALSE(m.ignored("axb"));
  EXPECT_TRUE(m.ignored("(x)+|{y}$"));
}

TEST(OciDockerignore, ExceptionsLastRuleWins) {
  auto r = rules("*.md\n!README*.md\nREADME-secret.md\n");
  EXPECT_TRUE(r.ignored("CHANGES.md"));
  EXPECT_FALSE(r.ignored("README.md"));
  EXPECT_FALSE(r.ignored("README-public.md"));
  EXPECT_TRUE(r.ignored("README-secret.md"));
  auto s = rules("*.md\nREADME-secret.md\n!README*.md\n");
  EXPECT_FALSE(s.ignored("README-secret.md"));
  EXPECT_TRUE(s.ignored("other.md"));
  // Everything but a few.
  auto only = rules("*\n!src\n!go.mod\n");
  EXPECT_TRUE(only.ignored("Dockerfile"));
  EXPECT_TRUE(only.ignored("vendor/x"));
  EXPECT_FALSE(only.ignored("src"));
  EXPECT_FALSE(only.ignored("src/main.go"));  // the exception matches a parent too
  EXPECT_FALSE(only.ignored("go.mod"));
  // An exception with leading blanks and a leading slash.
  auto t = rules("dist\n!  /dist/keep.txt\n");
  EXPECT_EQ(t.rules()[1].pattern, "dist/keep.txt");
  EXPECT_TRUE(t.rules()[1].exception);
  EXPECT_FALSE(t.ignored("dist/keep.txt"));
  EXPECT_TRUE(t.ignored("dist/other.txt"));
}

TEST(OciDockerignore, MayContainException) {
  auto none = rules("node_modules\n");
  EXPECT_FALSE(none.may_contain_exception("node_modules"));
  auto r = rules("vendor\n!vendor/keep/**\nbuild\n!**/*.keep\n");
  EXPECT_TRUE(r.ignored("vendor/x"));
  EXPECT_FALSE(r.ignored("vendor/keep/a"));
  EXPECT_TRUE(r.may_contain_exception("vendor"));
  EXPECT_TRUE(r.may_contain_exception("vendor/keep"));
  EXPECT_TRUE(r.may_contain_exception("build"));  // **/*.keep can match below anything
  auto s = rules("vendor\n!vendor/keep\n!docs/*/x\n");
  EXPECT_TRUE(s.may_contain_exception("vendor"));
  EXPECT_FALSE(s.may_contain_exception("vendor/other"));
  EXPECT_TRUE(s.may_contain_exception("vendor/keep/deep"));
  EXPECT_TRUE(s.may_contain_exception("docs/a"));
  EXPECT_FALSE(s.may_contain_exception("docs/a/y"));
  EXPECT_FALSE(s.may_contain_exception("other"));
}

TEST(OciDockerignore, Errors) {
  EXPECT_EQ(parse_err("a\n!\n"), ".dockerignore line 2: a \"!\" without a pattern");
  EXPECT_EQ(parse_err("ok\n[abc\n"), ".dockerignore line 2: bad pattern \"[abc\": a [ without its ]");
  EXPECT_EQ(parse_err("[z-a]\n"), ".dockerignore line 1: bad pattern \"[z-a]\": a range that runs backwards");
  EXPECT_EQ(parse_err("a\\\n"), ".dockerignore line 1: bad pattern \"a\\\": it ends in an escape \\");
}

TEST(OciDockerignore, NotUtf8DoesNotCrash) {
  auto r = rules("\xFF\xFE*\n[\xC3]x\n?\x80\n");
  EXPECT_TRUE(r.ignored("\xFF\xFE\xC3\xA9"));
  EXPECT_TRUE(r.ignored("\xC3x"));  // a lone lead byte is one character
  EXPECT_TRUE(r.ignored("a\x80"));
  EXPECT_FALSE(r.ignored("\xFF"));
  for (int b = 0; b < 256; ++b) {
    std::string p = "a" + std::string(1, static_cast<char>(b)) + "*[" + std::string(1, static_cast<char>(b)) + "]";
    auto x = IgnoreRules::parse(p);
    if (x) {
      (void)x->ignored(std::string(1, static_cast<char>(b)) + "/q");
      (void)x->may_contain_exception(std::string(1, static_cast<char>(b)));
    }
  }
}

TEST(OciDockerignore, ManyStarsStayFast) {
  auto r = rules("*a*a*a*a*a*a*a*a*a*a*b\n**/**/**/**/**/**/z\n");
  std::string path(200, 'a');
  EXPECT_FALSE(r.ignored(path));
  std::string deep;
  for (int i = 0; i < 60; ++i) deep += "d/";
  EXPECT_FALSE(r.ignored(deep + "y"));
  EXPECT_TRUE(r.ignored(deep + "z"));
}

}  // namespace
}  // namespace kern::oci::build
