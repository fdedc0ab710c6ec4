// The pure parts of kern box's command line: env files, -v parsing and refusals, exit codes.
#include <gtest/gtest.h>

#include "cli/bind_policy.h"
#include "cli/env_file.h"
#include "cli/exit_codes.h"

namespace kern::cli {
namespace {

TEST(EnvFile, CommentsBlanksAndLaterWins) {
  auto r = parse_env_file("# c\n\nA=1\n  B=two words\nA=3\n", "f.env");
  ASSERT_TRUE(r);
  std::vector<std::string> env = {"PATH=/bin", "A=0"};
  merge_env(env, *r);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "A=3", "B=two words"}));
}

TEST(EnvFile, BadLineNamesFileAndLine) {
  auto r = parse_env_file("A=1\nNOEQUALS\n", "box.env");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::config);
  EXPECT_NE(r.error().what().find("box.env:2"), std::string::npos);
}

TEST(EnvFile, AssignmentRules) {
  EXPECT_TRUE(check_env_assignment("K=V").empty());
  EXPECT_TRUE(check_env_assignment("K=").empty());
  EXPECT_FALSE(check_env_assignment("K").empty());   // never copied from the host
  EXPECT_FALSE(check_env_assignment("=V").empty());
  EXPECT_FALSE(check_env_assignment("A B=1").empty());
}

TEST(Volume, Parsing) {
  auto v = parse_volume("/src:/dst:ro");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->source, "/src");
  EXPECT_EQ(v->dest, "/dst");
  EXPECT_TRUE(v->read_only);
  auto w = parse_volume("rel/src://a//b/");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->dest, "/a/b");
  EXPECT_FALSE(w->read_only);
  EXPECT_FALSE(parse_volume("/src:relative"));
  EXPECT_FALSE(parse_volume("/src:/a/../b"));
  EXPECT_FALSE(parse_volume("/src:/a/./b"));
  EXPECT_FALSE(parse_volume("/src:/"));
  EXPECT_FALSE(parse_volume("/src:/proc/x"));
  EXPECT_FALSE(parse_volume("/src"));
}

TEST(Volume, RefusesSourcesThatHandOverTheHost) {
  BindRefusalContext ctx{"/home/u", {"/home/u/.cache/kern", "/run/user/1000/kern"}, {"/run/docker.sock"}};
  for (const char* bad : {"/", "/etc", "/proc", "/sys", "/dev", "/proc/1", "/sys/kernel", "/dev/kvm",
                          "/home/u", "/home", "/run", "/run/docker.sock", "/home/u/.cache/kern",
                          "/home/u/.cache/kern/layers", "/run/user/1000"})
    EXPECT_FALSE(check_bind_source(bad, ctx)) << bad;
  for (const char* good : {"/home/u/project", "/srv/data", "/etc/resolv.conf", "/tmp/x"})
    EXPECT_TRUE(check_bind_source(good, ctx)) << good;
}

TEST(ExitCodes, OneTable) {
  EXPECT_EQ(exit_code_for(Error(ErrorKind::usage, 0, "x"), ExitTable::box), 125);
  EXPECT_EQ(exit_code_for(Error(ErrorKind::setup, EPERM, "x"), ExitTable::box), 125);
  EXPECT_EQ(exit_code_for(Error(ErrorKind::workload, ENOENT, "x"), ExitTable::box), 127);
  EXPECT_EQ(exit_code_for(Error(ErrorKind::workload, EACCES, "x"), ExitTable::box), 126);
  EXPECT_EQ(exit_code_for(Error(ErrorKind::workload, ENOEXEC, "x"), ExitTable::box), 126);
  EXPECT_EQ(exit_code_for(Error(ErrorKind::usage, 0, "x"), ExitTable::verb), 2);
  EXPECT_EQ(exit_code_for(Error(ErrorKind::image, 0, "x"), ExitTable::verb), 1);
}

}  // namespace
}  // namespace kern::cli
