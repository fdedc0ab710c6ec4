// Where kern box's command starts without "--" (cli/box_argv.h), against the real box flags:
// a bare word after a flag starts the command as in `docker run`; the argv the SDKs build
// (NAME first, profile tokens anywhere, "--" before the command) keeps its meaning.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/box_argv.h"
#include "cli/box_options.h"

namespace kern::cli {
namespace {

size_t start(const std::vector<std::string>& words) {
  CLI::App app{"t"};
  BoxOptions o;
  add_box_flags(&app, o);
  return box_command_start(words, cli11_arity(app));
}

TEST(BoxArgv, BareWordAfterAFlagStartsTheCommand) {
  EXPECT_EQ(start({"--image", "busybox", "date"}), 2u);
  EXPECT_EQ(start({"--image=busybox", "date"}), 1u);
  EXPECT_EQ(start({"--rootfs", "/r", "ls", "-la", "/"}), 2u);
  EXPECT_EQ(start({"-q", "sh", "-c", "echo hi"}), 1u);
  EXPECT_EQ(start({"-it", "--image", "b", "sh"}), 3u);
}

TEST(BoxArgv, FlagValuesAreNotTheCommand) {
  EXPECT_EQ(start({"--image", "b", "-v", "/a:/b", "-e", "K=V", "-w", "/tmp", "cat"}), 8u);
  EXPECT_EQ(start({"--image", "b", "-va:/b", "cat"}), 3u);
  EXPECT_EQ(start({"--image", "b", "-m", "64m", "--pids-limit", "9", "--timeout", "3", "id"}), 8u);
  // A value that looks like a flag is still the value of a flag that needs one.
  EXPECT_EQ(start({"--image", "b", "-e", "-x", "true"}), 4u);
}

// The flags live in option groups (box_flags.cc): each still parses as the verb's own, and no
// name is given twice (CLI11 checks that only within one group).
TEST(BoxArgv, FlagsInOptionGroupsParseAndNoNameIsGivenTwice) {
  CLI::App app{"t"};
  BoxOptions o;
  add_box_flags(&app, o);
  std::vector<std::string> names;
  auto collect = [&](const CLI::App* a) {
    for (const CLI::Option* op : a->get_options()) {
      for (const auto& l : op->get_lnames()) names.push_back("--" + l);
      for (const auto& s : op->get_snames()) names.push_back("-" + s);
    }
  };
  collect(&app);
  for (const CLI::App* g : app.get_subcommands([](const CLI::App* s) { return s->get_name().empty(); })) collect(g);
  EXPECT_GT(names.size(), 40u);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  EXPECT_EQ(dup, sorted.end()) << "a flag name is given twice: " << (dup == sorted.end() ? "" : *dup);
  std::vector<std::string> argv = {"--image", "b", "-m", "64m", "--net", "host", "--cap-drop", "ALL", "-v", "/a:/b",
                                   "--name", "n1", "--allow-uncapped", "-it"};
  std::vector<std::string> rev(argv.rbegin(), argv.rend());
  app.parse(rev);
  EXPECT_EQ(o.image, "b");
  EXPECT_EQ(o.limits.memory, "64m");
  EXPECT_EQ(o.net, "host");
  EXPECT_EQ(o.cap_drop, std::vector<std::string>{"ALL"});
  EXPECT_EQ(o.volumes, std::vector<std::string>{"/a:/b"});
  EXPECT_EQ(o.docker.name, "n1");
  EXPECT_TRUE(o.limits.allow_uncapped);
  EXPECT_TRUE(o.interactive);
  EXPECT_TRUE(o.tty);
}

TEST(BoxArgv, SdkArgvKeepsItsMeaning) {
  EXPECT_EQ(start({"NAME", "--image", "X"}), 3u);
  EXPECT_EQ(start({"NAME", "vcpu:heavy", "--image", "X", "vdisk:scratch", "--cpus", "1", "vgpio:s"}), 8u);
  EXPECT_EQ(start({"--image", "X", "vcpu:a", "-q", "vgpio:b"}), 5u);
  EXPECT_EQ(start({}), 0u);
}

TEST(BoxArgv, BareWordsBeforeAnyFlagAreKerns) {
  // The name, and a second bare word that spec_builder refuses with its own hint.
  EXPECT_EQ(start({"NAME", "date", "--image", "b"}), 4u);
}

TEST(BoxArgv, UnknownFlagsTakeNoValue) {
  EXPECT_EQ(start({"--image", "b", "--bogus", "date"}), 3u);
}

// With a "--" given, a bare word followed by more of kern's flags is not the command (issue 21,
// item 10): the error names it and where the box name goes. A command that carries a "--" of
// its own (no flag of kern's after its first word) keeps its docker meaning.
TEST(BoxArgv, ABareWordBeforeSeparatorAndKernFlagsIsMisplaced) {
  CLI::App app{"t"};
  BoxOptions o;
  add_box_flags(&app, o);
  auto arity = cli11_arity(app);
  std::vector<std::string> words = {"-q", "web", "--rootfs", "/r"};
  size_t at = box_command_start(words, arity);
  ASSERT_EQ(at, 1u);
  auto e = misplaced_before_separator(words, at, arity, {"/bin/sh", "-c", "sleep 1", "x", "y"});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->message(), "\"web\" after \"-q\" is not the command: the command is what follows \"--\"");
  EXPECT_EQ(e->hint(), "the box name goes right after box (or give --name web): kern box web -q --rootfs /r -- "
                       "/bin/sh -c sleep 1 ...");
  // A name already given: the word is a value given to a flag that takes none.
  words = {"api", "-q", "web", "-it", "--rootfs", "/r"};
  e = misplaced_before_separator(words, box_command_start(words, arity), arity, {"true"});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->hint(), "\"-q\" does not take it as a value; kern box --help lists the flags and their values");
  // After a flag's own value, the flag is named.
  words = {"api", "--rootfs", "/r", "web", "-q"};
  e = misplaced_before_separator(words, box_command_start(words, arity), arity, {"true"});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->message(), "\"web\" after \"--rootfs\" is not the command: the command is what follows \"--\"");
  // docker's habit: the command's own "--".
  words = {"--rootfs", "/r", "grep", "-n", "x"};
  EXPECT_FALSE(misplaced_before_separator(words, box_command_start(words, arity), arity, {"-v"}).has_value());
}

}  // namespace
}  // namespace kern::cli
