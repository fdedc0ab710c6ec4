// delete_container against a real cgroup v2 directory: what the container's process left in its
// cgroup is killed and the cgroup removed with the state. Needs root and a cgroup2 mount; skipped
// with the reason elsewhere.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/bundle/container_ops.h"
#include "runtime/bundle/state_dir.h"
#include "runtime/sys/syscall.h"

namespace kern::bundle {
namespace {

std::string cgroup2_mount() {
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    size_t sep = line.find(" - ");
    if (sep == std::string::npos || line.compare(sep + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream in(line.substr(0, sep));
    std::string field;
    for (int i = 0; i < 5 && in >> field; ++i) {
    }
    return field;  // the fifth field: the mount point
  }
  return "";
}

class BundleContainerOps : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string mount = cgroup2_mount();
    if (::geteuid() != 0 || mount.empty()) GTEST_SKIP() << "needs root and a cgroup2 mount to make a cgroup";
    cgroup_ = mount + "/kern-unit-delete-" + std::to_string(::getpid());
    if (::mkdir(cgroup_.c_str(), 0755) != 0) GTEST_SKIP() << "cannot mkdir " << cgroup_ << ": " << strerror(errno);
    char tmpl[] = "/tmp/kern-containerops-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
  }
  void TearDown() override {
    if (left_ > 0) {
      ::kill(left_, SIGKILL);
      ::waitpid(left_, nullptr, 0);
    }
    if (!cgroup_.empty()) ::rmdir(cgroup_.c_str());
    if (!base_.empty()) (void)sys::remove_tree(AT_FDCWD, base_);
  }
  // A started container `id` in cgroup_ whose recorded process is (pid, start time).
  bool record(const StateDir& dir, const std::string& id, pid_t pid, uint64_t start) {
    ContainerRecord r;
    r.id = id;
    r.bundle = base_;
    r.pid = pid;
    r.pid_start_time = start;
    r.started = true;
    r.cgroup = cgroup_;
    return dir.create(id).has_value() && dir.write(r).has_value();
  }
  std::string cgroup_, base_;
  pid_t left_ = -1;
};

TEST_F(BundleContainerOps, DeleteKillsWhatTheProcessLeftInItsCgroupAndRemovesIt) {
  // A process that outlived the container's own: it sits in the container's cgroup.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  left_ = ::fork();
  ASSERT_GE(left_, 0);
  if (left_ == 0) {
    std::ofstream(cgroup_ + "/cgroup.procs") << ::getpid() << "\n";
    (void)!::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  // The container's process itself is gone (exited and reaped): the container is stopped.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);

  auto dir = StateDir::open(base_ + "/root");
  ASSERT_TRUE(dir.has_value()) << dir.error().what();
  ASSERT_TRUE(record(*dir, "c1", gone, 1));

  auto del = delete_container(*dir, "c1", false);
  ASSERT_TRUE(del.has_value()) << del.error().what();
  int status = 0;
  ASSERT_EQ(::waitpid(left_, &status, 0), left_);
  left_ = -1;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_NE(::access(cgroup_.c_str(), F_OK), 0) << cgroup_ << " is still there";
  EXPECT_FALSE(dir->read("c1").has_value());
}

TEST_F(BundleContainerOps, DeleteOfAStoppedContainerWithAnEmptyCgroupRemovesIt) {
  auto dir = StateDir::open(base_ + "/root");
  ASSERT_TRUE(dir.has_value()) << dir.error().what();
  ASSERT_TRUE(record(*dir, "c2", 1, 12345678901ull));  // pid 1 with a start time not its own: stopped
  auto del = delete_container(*dir, "c2", false);
  ASSERT_TRUE(del.has_value()) << del.error().what();
  EXPECT_NE(::access(cgroup_.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace kern::bundle
