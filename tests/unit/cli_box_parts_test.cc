// The pure parts of kern box's command line: env files, -v parsing and refusals, exit codes.
#include <gtest/gtest.h>

#include "cli/bind_policy.h"
#include "cli/env_file.h"
#include "cli/exit_codes.h"

namespace kern::cli {
namespace {

// A caller environment of HOME=/home/u and EMPTY= only.
const CallerEnv kCaller = [](const std::string& n) -> const char* {
  return n == "HOME" ? "/home/u" : n == "EMPTY" ? "" : nullptr;
};

TEST(EnvFile, CommentsBlanksAndLaterWins) {
  auto r = parse_env_file("# c\n\nA=1\n  B=two words\nA=3\n", "f.env", kCaller);
  ASSERT_TRUE(r);
  std::vector<std::string> env = {"PATH=/bin", "A=0"};
  merge_env(env, *r);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "A=3", "B=two words"}));
}

TEST(EnvFile, BadLineNamesFileAndLine) {
  auto r = parse_env_file("A=1\nA B=1\n", "box.env", kCaller);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::config);
  EXPECT_NE(r.error().what().find("box.env:2"), std::string::npos);
}

TEST(EnvFile, AssignmentRules) {
  EXPECT_TRUE(check_env_assignment("K=V").empty());
  EXPECT_TRUE(check_env_assignment("K=").empty());
  EXPECT_FALSE(check_env_assignment("K").empty());  // kern exec: K=V only
  EXPECT_TRUE(check_env_assignment("K", true).empty());
  EXPECT_FALSE(check_env_assignment("=V").empty());
  EXPECT_FALSE(check_env_assignment("", true).empty());
  EXPECT_FALSE(check_env_assignment("A B=1").empty());
  EXPECT_FALSE(check_env_assignment("A B", true).empty());
}

// As docker run -e K and a bare K in --env-file (issue 21, item 15): the caller's value is
// copied, an empty one too, and a variable the caller does not have is left out.
TEST(EnvFile, BareNamesCopyTheCallersValue) {
  EXPECT_EQ(env_entry("HOME", kCaller), "HOME=/home/u");
  EXPECT_EQ(env_entry("EMPTY", kCaller), "EMPTY=");
  EXPECT_EQ(env_entry("NOPE", kCaller), std::nullopt);
  EXPECT_EQ(env_entry("HOME=/x", kCaller), "HOME=/x");
  auto r = parse_env_file("HOME\nNOPE\nEMPTY\nA=1\n", "f.env", kCaller);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(*r, (std::vector<std::string>{"HOME=/home/u", "EMPTY=", "A=1"}));
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

// The option field is a comma list, never part of the destination.
TEST(Volume, OptionFieldIsACommaList) {
  struct Case {
    const char* spec;
    bool read_only;
  };
  for (const Case& c : {Case{"/src:/srv:ro,z", true}, Case{"/src:/srv:Z,rw", false}, Case{"/src:/srv:z", false},
                        Case{"/src:/srv:rw", false}}) {
    auto v = parse_volume(c.spec);
    ASSERT_TRUE(v) << c.spec << ": " << v.error().what();
    EXPECT_EQ(v->dest, "/srv") << c.spec;
    EXPECT_EQ(v->read_only, c.read_only) << c.spec;
  }
  for (const char* bad : {"/src:/srv:RO", "/src:/srv:rx", "/src:/srv:ro,", "/src:/srv:", "/src:/srv:ro,rw",
                          "/src:/srv:ro,ro", "/src:/srv:ro,noexec", "/src:/a:b:ro", "/s:rc:/srv:ro"}) {
    auto r = parse_volume(bad);
    ASSERT_FALSE(r) << bad << " -> " << r->dest;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage) << bad;
  }
  auto named = parse_volume("/src:/srv:ro,rx");
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().what().find("unknown option \"rx\""), std::string::npos) << named.error().what();
  auto src_colon = parse_volume("/sr:c:/srv");
  ASSERT_FALSE(src_colon);
  EXPECT_NE(src_colon.error().what().find("containing ':'"), std::string::npos) << src_colon.error().what();
  auto colon = parse_volume("/src:/a:b:ro");
  ASSERT_FALSE(colon);
  EXPECT_NE(colon.error().what().find("containing ':'"), std::string::npos) << colon.error().what();
}

TEST(Volume, RelabelOptionsAreRefusedWhereSELinuxIsOn) {
  for (const char* v : {"/src:/srv:z", "/src:/srv:ro,Z"}) {
    auto r = parse_volume(v, /*selinux=*/true);
    ASSERT_FALSE(r) << v;
    EXPECT_NE(r.error().what().find("SELinux"), std::string::npos) << r.error().what();
  }
  EXPECT_TRUE(parse_volume("/src:/srv:ro", /*selinux=*/true));
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

// Docker's rule: a source without '/' that is not "." or ".." names a volume; a path does not.
TEST(Volume, NamedVolumeSource) {
  auto v = parse_volume("data_1:/srv:ro");
  ASSERT_TRUE(v) << v.error().what();
  EXPECT_EQ(v->volume, "data_1");
  EXPECT_TRUE(v->source.empty());
  EXPECT_EQ(v->dest, "/srv");
  EXPECT_TRUE(v->read_only);
  for (const char* path : {"./data:/srv", "../data:/srv", ".:/srv", "..:/srv", "/data:/srv"}) {
    auto p = parse_volume(path);
    ASSERT_TRUE(p) << path << ": " << p.error().what();
    EXPECT_TRUE(p->volume.empty()) << path;
  }
  EXPECT_TRUE(is_volume_source("a"));
  EXPECT_FALSE(is_volume_source("."));
  EXPECT_FALSE(is_volume_source("a/b"));
  for (const char* bad : {"-data:/srv", ".data:/srv", "da@ta:/srv", "_x:/srv"}) {
    auto r = parse_volume(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage) << bad;
    EXPECT_NE(r.error().what().find("invalid volume name"), std::string::npos) << r.error().what();
  }
}

}  // namespace
}  // namespace kern::cli
