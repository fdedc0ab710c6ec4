// kern exec's command line, pure parts: the words after the flags, -u, and the environment
// (the box's, then TERM for -t, then exec's --env-file and -e, read as kern box reads its own).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/exec_command.h"
#include "cli/spec_builder.h"

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

const PasswdLookup kNoPasswd = [](const std::string&) { return std::optional<std::pair<unsigned long, unsigned long>>(); };
const CallerEnv kNoCaller = [](const std::string&) -> const char* { return nullptr; };

TEST(ExecUser, UidAndGid) {
  auto u = resolve_user_ids("1000:100", kNoPasswd, true);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->first, 1000u);
  EXPECT_EQ(u->second, 100u);
  auto only = resolve_user_ids("7", kNoPasswd, true);
  ASSERT_TRUE(only);
  EXPECT_EQ(only->second, 7u) << "the gid defaults to the uid";
  for (const char* bad : {"", "root", "1:", ":1", "1:x", "-1", "1234567890"})
    EXPECT_FALSE(resolve_user_ids(bad, kNoPasswd, true)) << bad;
}

TEST(ExecUser, NamesAreLookedUpInThePasswdGiven) {
  PasswdLookup passwd = [](const std::string& name) {
    return name == "app" ? std::optional<std::pair<unsigned long, unsigned long>>({1000, 1001}) : std::nullopt;
  };
  auto u = resolve_user_ids("app", passwd, true);
  ASSERT_TRUE(u) << u.error().what();
  EXPECT_EQ(*u, (std::pair<uid_t, gid_t>{1000, 1001})) << "the name's own group";
  auto g = resolve_user_ids("app:5", passwd, true);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->second, 5u);
  auto none = resolve_user_ids("nobody", passwd, true);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().what().find("no user \"nobody\""), std::string::npos) << none.error().what();
  auto unmapped = resolve_user_ids("app", passwd, false);
  ASSERT_FALSE(unmapped);
  EXPECT_NE(unmapped.error().what().find("only id 0 is mapped"), std::string::npos);
  EXPECT_TRUE(resolve_user_ids("0:0", passwd, false)) << "id 0 is mapped in every box";
  // The same words, the same line as kern box's (parse_user_words).
  for (const char* bad : {"0:", ":0", "0:x"}) {
    auto e = resolve_user_ids(bad, passwd, true);
    auto b = parse_user_words(bad);
    ASSERT_FALSE(e);
    ASSERT_FALSE(b);
    EXPECT_EQ(e.error().what(), b.error().what()) << bad;
  }
}

TEST(ExecEnv, BoxEnvThenTermThenExecLaterWins) {
  V box = {"PATH=/bin", "HOSTNAME=web", "A=box"};
  auto env = exec_env(box, true, {}, {"A=exec", "B=new"}, kNoCaller);
  ASSERT_TRUE(env) << env.error().what();
  EXPECT_EQ(*env, (V{"PATH=/bin", "HOSTNAME=web", "A=exec", "TERM=xterm", "B=new"}));
  auto term = exec_env({"TERM=vt100"}, true, {}, {}, kNoCaller);
  ASSERT_TRUE(term);
  EXPECT_EQ(*term, (V{"TERM=xterm"})) << "-t sets TERM as kern box -t does";
  auto plain = exec_env(box, false, {}, {}, kNoCaller);
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, box) << "without -t or -e: exactly the box's environment";
  auto own = exec_env(box, true, {}, {"TERM=screen"}, kNoCaller);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->back(), "TERM=screen") << "exec's -e beats the -t default";
}

TEST(ExecEnv, BareNameCopiesTheCallersValue) {
  CallerEnv caller = [](const std::string& k) -> const char* { return k == "SET" ? "v w" : k == "EMPTY" ? "" : nullptr; };
  auto env = exec_env({"A=1"}, false, {}, {"SET", "UNSET", "EMPTY"}, caller);
  ASSERT_TRUE(env) << env.error().what();
  EXPECT_EQ(*env, (V{"A=1", "SET=v w", "EMPTY="})) << "an unset name is left out";
}

TEST(ExecEnv, BadAssignmentIsAUsageError) {
  for (const char* bad : {"=x", "", "A B=1"}) {
    auto env = exec_env({}, false, {}, {bad}, kNoCaller);
    ASSERT_FALSE(env) << bad;
    EXPECT_EQ(env.error().kind(), ErrorKind::usage);
    EXPECT_EQ(env.error().what().rfind("-e: ", 0), 0u) << "kern box's line: " << env.error().what();
  }
}

}  // namespace
}  // namespace kern::cli
