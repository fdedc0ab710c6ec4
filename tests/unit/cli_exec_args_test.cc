// kern exec's command line, pure parts: the words after the flags, -u, and the environment
// (the box's, then TERM for -t, then exec's -e; nothing of the caller's).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/exec_command.h"

namespace kern::cli {
namespace {

using V = std::vector<std::string>;

TEST(ExecWords, NameThenCommandWithoutSeparator) {
  auto w = split_exec_words({"web", "ls", "-l"}, false, {});
  ASSERT_TRUE(w) << w.error().what();
  EXPECT_EQ(w->name, "web");
  EXPECT_EQ(w->command, (V{"ls", "-l"}));
}

TEST(ExecWords, CommandAfterSeparator) {
  auto w = split_exec_words({"web"}, true, {"sh", "-c", "exit 7"});
  ASSERT_TRUE(w) << w.error().what();
  EXPECT_EQ(w->command, (V{"sh", "-c", "exit 7"}));
}

TEST(ExecWords, WordsBetweenNameAndSeparatorAreRefused) {
  auto w = split_exec_words({"web", "-e", "A=1"}, true, {"sh"});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind(), ErrorKind::usage);
  EXPECT_NE(w.error().what().find("between the box name"), std::string::npos) << w.error().what();
}

TEST(ExecWords, NoNameNoCommandBadName) {
  EXPECT_FALSE(split_exec_words({}, false, {}));
  EXPECT_FALSE(split_exec_words({"web"}, false, {}));
  EXPECT_FALSE(split_exec_words({"web"}, true, {}));
  EXPECT_FALSE(split_exec_words({"../x", "sh"}, false, {}));
  auto flag = split_exec_words({"--bogus", "sh"}, false, {});
  ASSERT_FALSE(flag);
  EXPECT_NE(flag.error().what().find("unknown flag"), std::string::npos);
}

TEST(ExecUser, UidAndGid) {
  auto u = parse_exec_user("1000:100");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->first, 1000u);
  EXPECT_EQ(u->second, 100u);
  auto only = parse_exec_user("7");
  ASSERT_TRUE(only);
  EXPECT_EQ(only->second, 7u) << "the gid defaults to the uid";
  for (const char* bad : {"", "root", "1:", ":1", "1:x", "-1", "1234567890"})
    EXPECT_FALSE(parse_exec_user(bad)) << bad;
}

TEST(ExecEnv, BoxEnvThenTermThenExecLaterWins) {
  V box = {"PATH=/bin", "HOSTNAME=web", "A=box"};
  auto env = exec_env(box, true, {"A=exec", "B=new"});
  ASSERT_TRUE(env) << env.error().what();
  EXPECT_EQ(*env, (V{"PATH=/bin", "HOSTNAME=web", "A=exec", "TERM=xterm", "B=new"}));
  auto term = exec_env({"TERM=vt100"}, true, {});
  ASSERT_TRUE(term);
  EXPECT_EQ(*term, (V{"TERM=xterm"})) << "-t sets TERM as kern box -t does";
  auto plain = exec_env(box, false, {});
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, box) << "without -t or -e: exactly the box's environment";
  auto own = exec_env(box, true, {"TERM=screen"});
  ASSERT_TRUE(own);
  EXPECT_EQ(own->back(), "TERM=screen") << "exec's -e beats the -t default";
}

TEST(ExecEnv, BadAssignmentIsAUsageError) {
  auto env = exec_env({}, false, {"=x"});
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().kind(), ErrorKind::usage);
}

}  // namespace
}  // namespace kern::cli
