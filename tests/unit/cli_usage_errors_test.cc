// Unknown verbs and flags (cli/usage_errors.h) and the edit distance behind "did you mean"
// (profiles/suggest.h).
#include <gtest/gtest.h>

#include "cli/usage_errors.h"
#include "profiles/suggest.h"

namespace kern::cli {
namespace {

const std::vector<std::string> kVerbs = {"box", "run", "exec", "images", "kernel", "gc", "ps"};

TEST(Suggest, EditDistance) {
  EXPECT_EQ(profiles::edit_distance("exce", "exec"), 2u);
  EXPECT_EQ(profiles::edit_distance("", "abc"), 3u);
  EXPECT_EQ(profiles::edit_distance("image", "image"), 0u);
  EXPECT_EQ(profiles::closest("cpu", {"cpus", "cpuset"}), "cpus");
  EXPECT_EQ(profiles::closest("zzzzzz", {"cpus", "cpuset"}), "");
}

// Equally near words: the one whose ending matches wins, in either order of the candidates.
TEST(Suggest, ATieGoesToTheMatchingEnding) {
  EXPECT_EQ(profiles::closest("imags", {"image", "images"}), "images");
  EXPECT_EQ(profiles::closest("imags", {"images", "image"}), "images");
  EXPECT_EQ(profiles::closest("imag", {"images", "image"}), "image");
}

// Issue 21 (item 15): docker's words get what kern has instead, not an unrelated guess
// ("create": the nearest verb by spelling); image and system words the same.
TEST(UsageErrors, DockerWordsSayWhatKernHasInstead) {
  auto e = unknown_verb({"create", "alpine"}, kVerbs);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->hint().find("kern creates and starts a box in one step"), std::string::npos) << e->hint();
  CLI::App app{"kern"};
  CLI::App* image = app.add_subcommand("image", "images");
  image->add_subcommand("prune", "prune");
  image->require_subcommand(1);
  Error m = missing_subcommand(app, {"image", "ls"});
  EXPECT_EQ(m.message(), "unknown command \"image ls\"");
  EXPECT_EQ(m.hint(), "kern images lists the images");
  m = missing_subcommand(app, {"image", "prun"});
  EXPECT_EQ(m.hint(), "did you mean \"kern image prune\"?");
  m = missing_subcommand(app, {"image"});
  EXPECT_EQ(m.message(), "kern image needs a command: prune");
  m = missing_subcommand(app, {"-v"});
  EXPECT_EQ(m.message(), "unknown flag \"-v\" for kern");
  EXPECT_EQ(m.hint(), "kern --version (or kern version) prints the version");
}

TEST(UsageErrors, UnknownVerbNamesItAndSuggests) {
  auto e = unknown_verb({"exce", "x"}, kVerbs);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->message(), "unknown command \"exce\"");
  EXPECT_EQ(e->hint(), "did you mean \"exec\"?");
  EXPECT_EQ(e->kind(), ErrorKind::usage);
  e = unknown_verb({"imags"}, kVerbs);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->hint(), "did you mean \"images\"?");
  // Nothing close: the listing, not a guess ("ab" is not a typo of "gc").
  e = unknown_verb({"ab"}, kVerbs);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->hint(), "kern help lists the commands");
}

TEST(UsageErrors, KnownVerbsAndFlagsAreNotUnknownVerbs) {
  EXPECT_FALSE(unknown_verb({"box", "--image", "x"}, kVerbs).has_value());
  EXPECT_FALSE(unknown_verb({"--version"}, kVerbs).has_value());
  EXPECT_FALSE(unknown_verb({}, kVerbs).has_value());
}

TEST(UsageErrors, UnknownFlagSuggestsTheVerbsOwn) {
  CLI::App app{"t", "kern"};
  app.set_help_flag("-h,--help");
  CLI::App* box = app.add_subcommand("box");
  std::string image;
  box->add_option("--image", image);
  auto e = unexpected_words(app, {"box", "--imagee", "b"}, {"--imagee"});
  EXPECT_EQ(e.message(), "unknown flag \"--imagee\" for kern box");
  EXPECT_EQ(e.hint(), "did you mean \"--image\"?");
  e = unexpected_words(app, {"box", "--imagee=b"}, {"--imagee=b"});
  EXPECT_EQ(e.message(), "unknown flag \"--imagee\" for kern box");
  e = unexpected_words(app, {"box", "--frobnicate"}, {"--frobnicate"});
  EXPECT_EQ(e.hint(), "kern box --help lists its flags");
  e = unexpected_words(app, {"box", "word"}, {"word"});
  EXPECT_EQ(e.message(), "unexpected argument \"word\" for kern box");
}

// kern box keeps most of its flags in option groups (box_flags.cc): they are suggested too.
TEST(UsageErrors, AFlagOfAnOptionGroupIsSuggested) {
  CLI::App app{"t", "kern"};
  CLI::App* box = app.add_subcommand("box");
  std::string memory;
  box->add_option_group("Limits")->add_option("-m,--memory", memory);
  auto e = unexpected_words(app, {"box", "--memroy", "1g"}, {"--memroy"});
  EXPECT_EQ(e.hint(), "did you mean \"--memory\"?");
}

}  // namespace
}  // namespace kern::cli
