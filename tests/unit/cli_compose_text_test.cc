// The text rules of compose files: interpolation, .env lines, shell words, durations.
#include <gtest/gtest.h>

#include <map>

#include "cli/compose_text.h"

namespace kern::compose {
namespace {

Lookup vars(std::map<std::string, std::string> m) {
  return [m](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

std::string interp(const std::string& t) {
  auto r = interpolate(t, vars({{"A", "a"}, {"EMPTY", ""}, {"B", "bee"}}));
  EXPECT_TRUE(r.has_value()) << t << ": " << (r ? "" : r.error().what());
  return r ? *r : "<error>";
}

std::string interp_error(const std::string& t) {
  auto r = interpolate(t, vars({{"A", "a"}, {"EMPTY", ""}}));
  EXPECT_FALSE(r.has_value()) << t;
  return r ? "" : r.error().message();
}

TEST(ComposeInterpolate, PlainAndBracedNames) {
  EXPECT_EQ(interp("x$A-y"), "xa-y");
  EXPECT_EQ(interp("${A}b"), "ab");
  EXPECT_EQ(interp("$UNSET|${UNSET}"), "|");
  EXPECT_EQ(interp("no dollar"), "no dollar");
}

TEST(ComposeInterpolate, DefaultsTellUnsetFromEmpty) {
  EXPECT_EQ(interp("${UNSET:-d}"), "d");
  EXPECT_EQ(interp("${EMPTY:-d}"), "d");
  EXPECT_EQ(interp("${EMPTY-d}"), "");
  EXPECT_EQ(interp("${UNSET-d}"), "d");
  EXPECT_EQ(interp("${A:-d}"), "a");
  EXPECT_EQ(interp("${UNSET:-${B}-x}"), "bee-x");  // a default is interpolated in turn
}

TEST(ComposeInterpolate, AlternativesTellUnsetFromEmpty) {
  EXPECT_EQ(interp("${A:+alt}"), "alt");
  EXPECT_EQ(interp("${EMPTY:+alt}"), "");
  EXPECT_EQ(interp("${EMPTY+alt}"), "alt");
  EXPECT_EQ(interp("${UNSET+alt}"), "");
}

TEST(ComposeInterpolate, RequiredVariables) {
  EXPECT_EQ(interp("${A:?must}"), "a");
  EXPECT_EQ(interp("${EMPTY?must}"), "");
  EXPECT_NE(interp_error("${UNSET:?set UNSET please}").find("required variable UNSET is missing a value: set UNSET please"),
            std::string::npos);
  EXPECT_NE(interp_error("${EMPTY:?x}").find("EMPTY is empty"), std::string::npos);
  EXPECT_NE(interp_error("${UNSET?}").find("UNSET"), std::string::npos);
}

TEST(ComposeInterpolate, DollarDollarIsADollar) {
  EXPECT_EQ(interp("$$A and $${A}"), "$A and ${A}");
}

TEST(ComposeInterpolate, MalformedReferencesAreErrors) {
  EXPECT_NE(interp_error("${A").find("unterminated"), std::string::npos);
  EXPECT_NE(interp_error("${1A}").find("invalid interpolation"), std::string::npos);
  EXPECT_NE(interp_error("${A:x}").find("invalid interpolation"), std::string::npos);
  EXPECT_NE(interp_error("cost: 5$").find("$$"), std::string::npos);
}

TEST(ComposeDotenv, QuotesCommentsAndExport) {
  auto r = parse_dotenv("# comment\n\nA=1\nexport B = two \nC='lit $X # not a comment'\nD=\"l1\\nl2\"\n"
                        "E=x # comment\nF\nG=\"multi\nline\"\nH=\n",
                        ".env");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  std::vector<std::pair<std::string, std::optional<std::string>>> want = {
      {"A", "1"}, {"B", "two"}, {"C", "lit $X # not a comment"}, {"D", "l1\nl2"}, {"E", "x"},
      {"F", std::nullopt}, {"G", "multi\nline"}, {"H", ""}};
  EXPECT_EQ(*r, want);
}

TEST(ComposeDotenv, ValuesAreInterpolatedFromOutsideThenFromAbove) {
  Lookup outer = vars({{"HOST", "db"}});
  auto r = parse_dotenv("PORT=5432\nURL=${HOST}:${PORT}\nQ=\"${PORT}x\"\nLIT='${PORT}'\nD=$$5\n", ".env", &outer);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  std::vector<std::pair<std::string, std::optional<std::string>>> want = {
      {"PORT", "5432"}, {"URL", "db:5432"}, {"Q", "5432x"}, {"LIT", "${PORT}"}, {"D", "$5"}};
  EXPECT_EQ(*r, want);
  auto bad = parse_dotenv("A=1\nB=${NOPE:?needed}\n", "/p/.env", &outer);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().what().find("/p/.env:2: required variable NOPE"), std::string::npos) << bad.error().what();
}

TEST(ComposeDotenv, ABadLineNamesFileAndLine) {
  auto r = parse_dotenv("A=1\n=2\n", "/p/.env");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().what().find("/p/.env:2"), std::string::npos) << r.error().what();
  EXPECT_FALSE(parse_dotenv("A=\"open\n", "f").has_value());
}

TEST(ComposeShell, SplitsAsAShellWould) {
  auto r = shell_split(R"(sh -c 'echo "$X"; exit 1' "a b" c\ d "q\"x" '')");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, (std::vector<std::string>{"sh", "-c", "echo \"$X\"; exit 1", "a b", "c d", "q\"x", ""}));
  EXPECT_FALSE(shell_split("echo 'open").has_value());
  EXPECT_EQ(shell_join({"curl", "-f", "http://x/?a=1&b", "it's"}), "curl -f 'http://x/?a=1&b' 'it'\\''s'");
}

TEST(ComposeDuration, ComposeSpellings) {
  EXPECT_EQ(duration_ms("1m30s"), 90000);
  EXPECT_EQ(duration_ms("500ms"), 500);
  EXPECT_EQ(duration_ms("1h"), 3600000);
  EXPECT_EQ(duration_ms("2.5s"), 2500);
  EXPECT_EQ(duration_ms("10"), 10000);
  EXPECT_EQ(duration_ms("5x"), std::nullopt);
  EXPECT_EQ(duration_ms(""), std::nullopt);
}

}  // namespace
}  // namespace kern::compose
