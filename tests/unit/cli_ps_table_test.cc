// The `kern ps` table (cli/ps_table.h): every row ends in a newline, long cells are cut with an
// ellipsis, never inside a UTF-8 character, and --no-trunc prints them whole.
#include <gtest/gtest.h>

#include "cli/ps_table.h"

namespace kern::cli {
namespace {

std::vector<std::string> lines_of(const std::string& out) {
  std::vector<std::string> v;
  size_t at = 0;
  while (at < out.size()) {
    size_t nl = out.find('\n', at);
    if (nl == std::string::npos) {
      v.push_back(out.substr(at) + "<no newline>");
      break;
    }
    v.push_back(out.substr(at, nl - at));
    at = nl + 1;
  }
  return v;
}

BoxRecord record(const std::string& name, const std::string& kind, const std::string& command) {
  BoxRecord r;
  r.name = name;
  r.kind = kind;
  r.init_pid = 4242;
  r.started_unix = 1000;
  r.command = command;
  return r;
}

TEST(PsTable, FitCellCutsWithAnEllipsisOnCharacterBoundaries) {
  EXPECT_EQ(fit_cell("short", 10), "short");
  EXPECT_EQ(fit_cell("exactly10!", 10), "exactly10!");
  EXPECT_EQ(fit_cell("eleven char", 10), "eleven ch\u2026");
  // Three two-byte characters, cut to two: one kept, then the ellipsis.
  EXPECT_EQ(fit_cell("\u00e9\u00e9\u00e9", 2), "\u00e9\u2026");
  EXPECT_EQ(fit_cell("abc", 0), "");
}

TEST(PsTable, EveryRowEndsInANewlineHoweverLongItsCommand) {
  std::vector<BoxRecord> boxes = {record("a", "box", std::string(2000, 'x')), record("b", "box", "sleep 1")};
  std::string out = ps_table(boxes, 1010, false);
  auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 3u) << out.substr(0, 600);
  EXPECT_EQ(lines[0].rfind("NAME", 0), 0u);
  EXPECT_NE(lines[1].find("xxx\u2026"), std::string::npos);
  EXPECT_LT(lines[1].size(), 160u);
  EXPECT_EQ(lines[1].rfind("a ", 0), 0u);
  EXPECT_NE(lines[2].find("10s"), std::string::npos);
  EXPECT_EQ(lines[2].substr(lines[2].size() - 7), "sleep 1");
  // Whole with no_trunc, still one line per box.
  out = ps_table(boxes, 1010, true);
  lines = lines_of(out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find(std::string(2000, 'x')), std::string::npos);
}

TEST(PsTable, KindAndEscapedCommandAreShown) {
  std::string out = ps_table({record("k", "kernel", "python kernel: python3"), record("e", "box", "echo \x1b[2J")}, 1000,
                             false);
  auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find(" kernel "), std::string::npos);
  EXPECT_EQ(lines[1].substr(lines[1].size() - 22), "python kernel: python3");
  EXPECT_EQ(lines[2].find('\x1b'), std::string::npos);
  EXPECT_NE(lines[2].find("\\x1b[2J"), std::string::npos);
}

}  // namespace
}  // namespace kern::cli
