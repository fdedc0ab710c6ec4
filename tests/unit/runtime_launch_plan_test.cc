// prepare(BoxSpec) -> LaunchPlan, pure: the exec, mount and cgroup parts come from the spec and
// nothing of the caller's plumbing (started fd, report fd, timing) reaches the plan; box init's
// reading of the workload's stage.
#include <gtest/gtest.h>
#include <sched.h>

#include "runtime/launch_plan.h"
#include "runtime/box/workload_stage.h"

namespace kern {
namespace {

BoxSpec spec() {
  BoxSpec s;
  s.name = "t";
  s.lower_dirs = {"/layers/a"};
  s.argv = {"sh", "-c", "true"};
  s.env = {"PATH=/bin:/usr/bin", "A=1"};
  s.cwd = "/w";
  s.hostname = "h";
  s.pass_fds = {{7, 3}};
  s.started_fd = 9;
  s.report_fd = 10;
  s.limits.memory_max = 1 << 20;
  return s;
}

TEST(LaunchPlan, ExecPartComesFromTheSpec) {
  LaunchPlan p = prepare(spec());
  EXPECT_EQ(p.exec.argv, (std::vector<std::string>{"sh", "-c", "true"}));
  EXPECT_EQ(p.exec.candidates, (std::vector<std::string>{"/bin/sh", "/usr/bin/sh"}));
  EXPECT_EQ(p.exec.cwd, "/w");
  EXPECT_EQ(p.exec.script_shell, "/bin/sh");  // a script without "#!" runs as execvp runs it
  EXPECT_EQ(p.exec.pass_fds, (std::vector<std::pair<int, int>>{{7, 3}}));
  EXPECT_EQ(p.hostname, "h");
  EXPECT_TRUE(p.loopback_up);
  EXPECT_EQ(*p.cgroup.limits.memory_max, 1u << 20);
}

TEST(LaunchPlan, CloneFlagsFollowTheNetwork) {
  BoxSpec s = spec();
  EXPECT_TRUE(prepare(s).clone_flags & CLONE_NEWNET);
  s.net = NetMode::host;
  LaunchPlan p = prepare(s);
  EXPECT_FALSE(p.clone_flags & CLONE_NEWNET);
  EXPECT_FALSE(p.loopback_up);
  EXPECT_TRUE(p.clone_flags & CLONE_NEWUSER);
  // --net private: a namespace of the box's own (pasta connects it), loopback up as with none.
  s.net = NetMode::private_net;
  p = prepare(s);
  EXPECT_TRUE(p.clone_flags & CLONE_NEWNET);
  EXPECT_TRUE(p.loopback_up);
}

TEST(LaunchPlan, MountPartIsTheMountPlan) {
  BoxSpec s = spec();
  s.binds.push_back({.source = "/data", .dest = "/srv", .read_only = true, .origin = "-v"});
  LaunchPlan p = prepare(s);
  ASSERT_EQ(p.mounts.binds.size(), 1u);
  EXPECT_EQ(p.mounts.steps.size(), build_mount_plan(s).size());
  EXPECT_EQ(p.mounts.steps.back().kind, MountStepKind::pivot_root);
}

TEST(ExecCandidates, PathSearchAndSlashes) {
  EXPECT_EQ(exec_candidates("/bin/x", {}), (std::vector<std::string>{"/bin/x"}));
  EXPECT_EQ(exec_candidates("x", {"PATH=:/a"}), (std::vector<std::string>{"./x", "/a/x"}));
  EXPECT_EQ(exec_candidates("x", {}).front(), "/usr/local/sbin/x");
}

TEST(WorkloadStage, OnlyTheExecStageCountsAsStarted) {
  EXPECT_EQ(classify_spawn(stage_exec), SpawnOutcome::started);
  EXPECT_EQ(classify_spawn(stage_failed), SpawnOutcome::failed);
  // Killed before it reached execve (out of memory during setup, SIGKILL): not started.
  EXPECT_EQ(classify_spawn(stage_setup), SpawnOutcome::died_early);
}

}  // namespace
}  // namespace kern
