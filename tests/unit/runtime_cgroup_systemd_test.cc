// Step 3 of the cgroup search (runtime/cgroup/systemd_scope.h) against fake systemd-run, systemctl and
// busctl that act on a fake cgroup tree: the scope is made once, its sleeper moved to keeper/,
// kern moved to launch-PID/, and a second start reuses the recorded scope.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "runtime/cgroup/systemd_scope.h"
#include "tests/unit/runtime_cgroup_fake_tree.h"

namespace kern {
namespace {

using testing::FakeCgroupTree;

void script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/bash\n" << body;
  ::chmod(path.c_str(), 0755);
}

class SystemdScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = t_.root();
    t_.dir("/rt");
    t_.dir("/xdg");
    t_.dir("/bin");
    t_.file("/user/session-1.scope/cgroup.controllers", "memory pids\n");
    std::string app = "$FAKE_CG/user/app.slice";
    script(root_ + "/bin/systemctl",
           "u=${@: -1}; [ -d " + app + "/$u ] && echo /user/app.slice/$u; exit 0\n");
    script(root_ + "/bin/systemd-run",
           "echo run >> $FAKE_CG/systemd-run.log\n"
           "for a in \"$@\"; do case $a in --unit=*) u=${a#--unit=};; esac; done\n"
           "d=" + app + "/$u; mkdir -p $d/kern\n"
           "echo 'memory pids' > $d/cgroup.controllers; : > $d/cgroup.subtree_control; echo $$ > $d/cgroup.procs\n"
           "echo 'memory pids' > $d/kern/cgroup.controllers; : > $d/kern/cgroup.subtree_control\n"
           "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n");
    script(root_ + "/bin/busctl",
           "set -- \"${@: -5}\"; d=" + app + "/$2; mkdir -p $d$3; echo $5 > $d$3/cgroup.procs\n"
           "grep -vx $5 $d/cgroup.procs > $d/procs.new; mv $d/procs.new $d/cgroup.procs\n");
    old_path_ = std::getenv("PATH");
    ::setenv("PATH", (root_ + "/bin:" + old_path_).c_str(), 1);
    ::setenv("FAKE_CG", root_.c_str(), 1);
    ::setenv("XDG_RUNTIME_DIR", (root_ + "/xdg").c_str(), 1);
    ::unsetenv("DBUS_SESSION_BUS_ADDRESS");
    host_ = t_.host("/user/session-1.scope");
    host_.runtime_dir = root_ + "/rt";
    scope_ = "/user/app.slice/kern-subtree-" + std::to_string(::geteuid()) + ".scope";
  }
  void TearDown() override {
    std::string keeper = t_.read(scope_ + "/keeper/cgroup.procs");
    if (!keeper.empty()) ::kill(std::atoi(keeper.c_str()), SIGKILL);
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("FAKE_CG");
  }
  FakeCgroupTree t_;
  std::string root_, old_path_, scope_;
  CgroupHost host_;
};

TEST_F(SystemdScopeTest, NoUserBusMeansNothingToSay) {
  auto r = systemd_subtree(host_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "");
}

TEST_F(SystemdScopeTest, TheScopeIsMadeOnceAndKernMovesIntoIt) {
  t_.file("/xdg/bus", "");
  auto r = systemd_subtree(host_);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->base, scope_ + "/kern");
  EXPECT_EQ(r->how, "systemd scope kern-subtree-" + std::to_string(::geteuid()) + ".scope");
  // The sleeper left the scope's own cgroup for keeper/, kern is in launch-PID/.
  EXPECT_EQ(t_.read(scope_ + "/cgroup.procs"), "");
  EXPECT_FALSE(t_.read(scope_ + "/keeper/cgroup.procs").empty());
  EXPECT_EQ(t_.read(scope_ + "/launch-" + std::to_string(::getpid()) + "/cgroup.procs"),
            std::to_string(::getpid()) + "\n");
  EXPECT_EQ(t_.read(scope_ + "/cgroup.subtree_control"), "+memory +pids");
  EXPECT_EQ(t_.read("/rt/systemd-scope"), "kern-subtree-" + std::to_string(::geteuid()) + ".scope\n" + scope_ + "\n");
  // A later start reuses the recorded scope: systemd-run is not asked again.
  auto again = systemd_subtree(host_);
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_EQ(again->base, scope_ + "/kern");
  EXPECT_EQ(t_.read("/systemd-run.log"), "run\n");
}

}  // namespace
}  // namespace kern
