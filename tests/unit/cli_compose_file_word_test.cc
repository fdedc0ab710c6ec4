// `kern compose FILE up`: the bare word before the subcommand becomes -f FILE, a subcommand's own
// name or a misspelt one does not.
#include <gtest/gtest.h>

#include "cli/compose_command.h"

namespace kern::cli {
namespace {

std::vector<std::string> moved(std::vector<std::string> head) {
  move_compose_file_word(head);
  return head;
}

using V = std::vector<std::string>;

TEST(ComposeFileWord, AFileBeforeTheSubcommandIsTheComposeFile) {
  EXPECT_EQ(moved({"compose", "stack/compose.yaml", "up", "-d"}), (V{"compose", "-f", "stack/compose.yaml", "up", "-d"}));
  EXPECT_EQ(moved({"compose", "docker-compose.yml", "down"}), (V{"compose", "-f", "docker-compose.yml", "down"}));
  // Options with a value before it are stepped over, with and without "=".
  EXPECT_EQ(moved({"compose", "-p", "shop", "--profile=x", "a.yml", "ps"}),
            (V{"compose", "-p", "shop", "--profile=x", "-f", "a.yml", "ps"}));
}

TEST(ComposeFileWord, SubcommandsAndOptionValuesStayAsTheyAre) {
  EXPECT_EQ(moved({"compose", "up", "-d"}), (V{"compose", "up", "-d"}));
  EXPECT_EQ(moved({"compose", "-f", "a.yml", "up"}), (V{"compose", "-f", "a.yml", "up"}));
  EXPECT_EQ(moved({"compose", "--project-directory", "./x", "down"}), (V{"compose", "--project-directory", "./x", "down"}));
  // A misspelt subcommand is not taken for a file (CLI11 names it), nor is another verb touched.
  EXPECT_EQ(moved({"compose", "upp"}), (V{"compose", "upp"}));
  EXPECT_EQ(moved({"box", "a.yml", "up"}), (V{"box", "a.yml", "up"}));
}

}  // namespace
}  // namespace kern::cli
