// kern exec's pure runtime parts: the lockdown record (from the plan, the JSON round trip, what
// a damaged record is refused for) and the exec plan built from it.
#include <gtest/gtest.h>

#include <sched.h>

#include <nlohmann/json.hpp>

#include "runtime/box_exec.h"
#include "runtime/box_lockdown.h"
#include "runtime/launch_plan.h"

namespace kern {
namespace {

LaunchPlan sample_plan(SeccompMode mode) {
  BoxSpec spec;
  spec.name = "web";
  spec.argv = {"sleep", "60"};
  spec.env = {"PATH=/usr/bin:/bin", "HOSTNAME=web", "A=1"};
  spec.cwd = "/srv";
  spec.uid = 5;
  spec.gid = 6;
  spec.user_set = true;
  spec.caps_keep = 0x3;
  spec.seccomp = mode;
  spec.hostname = "web";
  return prepare(spec);
}

TEST(Lockdown, FromPlanCarriesTheWorkloadsLockdown) {
  auto l = lockdown_from_plan(sample_plan(SeccompMode::denylist), 42, 777);
  ASSERT_TRUE(l) << l.error().what();
  EXPECT_EQ(l->init_pid, 42);
  EXPECT_EQ(l->init_start, 777u);
  EXPECT_EQ(l->seccomp, SeccompMode::denylist);
  EXPECT_EQ(l->caps_keep, 0x3u);
  EXPECT_EQ(l->env, (std::vector<std::string>{"PATH=/usr/bin:/bin", "HOSTNAME=web", "A=1"}));
  EXPECT_EQ(l->cwd, "/srv");
  EXPECT_EQ(l->uid, 5u);
  EXPECT_EQ(l->gid, 6u);
  EXPECT_TRUE(l->user_set);
  EXPECT_TRUE(l->namespaces & CLONE_NEWUSER);
  EXPECT_TRUE(l->namespaces & CLONE_NEWPID);
  EXPECT_TRUE(l->namespaces & CLONE_NEWNET) << "--net none: a network namespace of its own";
}

// Issue 21 item 18: an environment entry or a working directory that is not UTF-8 made the
// record's dump throw (kern aborted with 134); it round-trips byte for byte now, and a record
// whose strings are UTF-8 is written as before.
TEST(Lockdown, BytesThatAreNotUtf8RoundTripExactly) {
  auto l = lockdown_from_plan(sample_plan(SeccompMode::allowlist), 42, 777);
  ASSERT_TRUE(l);
  l->env.push_back(std::string("B=\xff\xfe\x00z", 6));
  l->env.push_back("C=\xc2\x9b ok");
  l->cwd = "/w\xff\xc0";
  std::string text = lockdown_to_json(*l);
  EXPECT_NE(text.find("\"C=\xc2\x9b ok\""), std::string::npos) << text;
  EXPECT_NE(text.find("{\"hex\":\"2f77ffc0\"}"), std::string::npos) << text;
  auto back = lockdown_from_json(text);
  ASSERT_TRUE(back) << back.error().what();
  EXPECT_EQ(back->env, l->env);
  EXPECT_EQ(back->cwd, l->cwd);
  // What is not one of the two shapes is refused, never thrown on.
  for (const char* bad : {"{\"hex\":\"2f7\"}", "{\"hex\":\"zz\"}", "{\"hex\":1}", "{\"b64\":\"x\"}", "7"}) {
    std::string t = text;
    size_t at = t.find("{\"hex\":\"2f77ffc0\"}");
    t.replace(at, std::string("{\"hex\":\"2f77ffc0\"}").size(), bad);
    EXPECT_FALSE(lockdown_from_json(t)) << bad;
  }
}

TEST(Lockdown, HostNetworkIsNotJoined) {
  BoxSpec spec;
  spec.name = "h";
  spec.net = NetMode::host;
  auto l = lockdown_from_plan(prepare(spec), 1, 1);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->namespaces & CLONE_NEWNET);
}

TEST(Lockdown, UnknownSeccompProgramIsRefused) {
  LaunchPlan p = sample_plan(SeccompMode::allowlist);
  static const struct sock_filter other[1] = {};
  p.seccomp = SeccompProgram{other, 1};
  EXPECT_FALSE(lockdown_from_plan(p, 1, 1));
}

TEST(Lockdown, JsonRoundTrip) {
  for (SeccompMode mode : {SeccompMode::allowlist, SeccompMode::denylist}) {
    auto l = lockdown_from_plan(sample_plan(mode), 4242, 123456789);
    ASSERT_TRUE(l);
    auto back = lockdown_from_json(lockdown_to_json(*l));
    ASSERT_TRUE(back) << back.error().what();
    EXPECT_EQ(back->init_pid, l->init_pid);
    EXPECT_EQ(back->init_start, l->init_start);
    EXPECT_EQ(back->namespaces, l->namespaces);
    EXPECT_EQ(back->caps_keep, l->caps_keep);
    EXPECT_EQ(back->seccomp, mode);
    EXPECT_EQ(back->env, l->env);
    EXPECT_EQ(back->cwd, l->cwd);
    EXPECT_EQ(back->uid, l->uid);
    EXPECT_EQ(back->gid, l->gid);
    EXPECT_EQ(back->user_set, l->user_set);
  }
}

// kern exec enters the box's AppArmor profile too: the request travels in the record (absent
// for a box without one) and into the exec plan.
TEST(Lockdown, AppArmorProfileTravelsToExec) {
  BoxSpec spec;
  spec.name = "aa";
  spec.apparmor_profile = "kern-test";
  LaunchPlan p = prepare(spec);
  EXPECT_EQ(p.exec.apparmor_exec, "exec kern-test");
  auto l = lockdown_from_plan(p, 7, 8);
  ASSERT_TRUE(l);
  auto back = lockdown_from_json(lockdown_to_json(*l));
  ASSERT_TRUE(back) << back.error().what();
  EXPECT_EQ(back->apparmor_exec, "exec kern-test");
  EXPECT_EQ(exec_plan_for(*back, ExecOverrides{}).apparmor_exec, "exec kern-test");
  auto none = lockdown_from_plan(sample_plan(SeccompMode::allowlist), 7, 8);
  ASSERT_TRUE(none);
  EXPECT_EQ(nlohmann::json::parse(lockdown_to_json(*none)).count("apparmor_exec"), 0u);
  nlohmann::json j = nlohmann::json::parse(lockdown_to_json(*l));
  j["apparmor_exec"] = "changeprofile x";
  EXPECT_FALSE(lockdown_from_json(j.dump())) << "only an exec request";
  j["apparmor_exec"] = 3;
  EXPECT_FALSE(lockdown_from_json(j.dump()));
}

TEST(Lockdown, DamagedRecordsAreRefused) {
  auto l = lockdown_from_plan(sample_plan(SeccompMode::allowlist), 10, 20);
  ASSERT_TRUE(l);
  nlohmann::json good = nlohmann::json::parse(lockdown_to_json(*l));
  EXPECT_FALSE(lockdown_from_json("")) << "empty";
  EXPECT_FALSE(lockdown_from_json("[1]")) << "not an object";
  EXPECT_FALSE(lockdown_from_json(good.dump().substr(0, 40))) << "cut short";
  for (const char* key : {"init_pid", "init_start", "namespaces", "caps_keep", "seccomp", "env", "cwd", "uid",
                          "gid", "user_set"}) {
    nlohmann::json j = good;
    j.erase(key);
    EXPECT_FALSE(lockdown_from_json(j.dump())) << "without " << key;
  }
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = good;
    j[key] = v;
    return lockdown_from_json(j.dump());
  };
  EXPECT_FALSE(with("seccomp", "none")) << "an unknown mode never means no filter";
  EXPECT_FALSE(with("seccomp", ""));
  EXPECT_FALSE(with("init_pid", 0));
  EXPECT_FALSE(with("init_pid", -1));
  EXPECT_FALSE(with("caps_keep", "3"));
  EXPECT_FALSE(with("namespaces", 1ull << 62)) << "bits that are no namespace";
  EXPECT_FALSE(with("cwd", "relative"));
  EXPECT_FALSE(with("env", nlohmann::json::array({1})));
  EXPECT_FALSE(with("user_set", 1));
}

TEST(ExecPlanFor, TheBoxsLockdownUnlessOverridden) {
  auto l = lockdown_from_plan(sample_plan(SeccompMode::allowlist), 1, 1);
  ASSERT_TRUE(l);
  ExecOverrides o;
  o.argv = {"ls", "-l"};
  o.env = {"PATH=/opt/bin", "X=1"};
  ExecPlan p = exec_plan_for(*l, o);
  EXPECT_EQ(p.argv, o.argv);
  EXPECT_EQ(p.env, o.env);
  EXPECT_EQ(p.candidates, (std::vector<std::string>{"/opt/bin/ls"})) << "looked up along exec's own PATH";
  EXPECT_EQ(p.cwd, "/srv");
  EXPECT_EQ(p.creds.uid, 5u);
  EXPECT_EQ(p.creds.gid, 6u);
  EXPECT_TRUE(p.creds.switch_ids);
  EXPECT_EQ(p.creds.caps.bounding, 0x3u);
  EXPECT_EQ(p.creds.caps.effective, 0u) << "uid 5 holds no capability";
  EXPECT_TRUE(p.pass_fds.empty()) << "no fd of kern's is carried in";

  o.cwd = "/tmp";
  o.user = std::make_pair(uid_t{0}, gid_t{0});
  ExecPlan q = exec_plan_for(*l, o);
  EXPECT_EQ(q.cwd, "/tmp");
  EXPECT_EQ(q.creds.uid, 0u);
  EXPECT_EQ(q.creds.gid, 0u);
  EXPECT_TRUE(q.creds.switch_ids);
  EXPECT_EQ(q.creds.caps.bounding, 0x3u) << "-u never adds capabilities";
  EXPECT_EQ(q.creds.caps.effective, 0x3u);
}

}  // namespace
}  // namespace kern
