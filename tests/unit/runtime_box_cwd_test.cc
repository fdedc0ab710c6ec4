// The working directory checks (runtime/box_cwd.h): which paths are refused before launch, and
// the getcwd check a box's process makes after its chdir, tried on a directory left outside a
// chroot (the shape of runc's CVE-2024-21626).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "runtime/box_cwd.h"
#include "tests/unit/test_require.h"

namespace kern {
namespace {

TEST(BoxCwd, RefusesAProcesssOwnProcDirectory) {
  for (const char* p : {"/proc/self/fd/3", "/proc/self", "/proc/self/cwd", "/proc/self/root/etc",
                        "/proc/thread-self/fd/4", "/proc/thread-self", "/proc/1/cwd", "/proc/4242/fd/7",
                        "/proc/1", "//proc//self/./fd/5", "/srv/../proc/self/fd/3", "/proc/./1/root"}) {
    auto r = check_box_cwd(p, "-w");
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().kind(), ErrorKind::config) << p;
    EXPECT_NE(r.error().what().find("-w: refusing the working directory"), std::string::npos) << r.error().what();
    EXPECT_NE(r.error().what().find(p), std::string::npos) << r.error().what();
  }
}

TEST(BoxCwd, AcceptsEverythingElse) {
  for (const char* p : {"/", "/proc", "/proc/sys", "/proc/sys/net", "/procfs/self/fd/3", "/srv/proc/self",
                        "/proc/selfish", "/proc/12a", "/proc/self-ish/fd", "/home/proc/1", "/proc/../srv"}) {
    EXPECT_TRUE(check_box_cwd(p, "-w")) << p;
  }
}

TEST(BoxCwd, NamesWhereTheDirectoryCameFrom) {
  auto r = check_box_cwd("/proc/self/fd/9", "process.cwd");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what().rfind("process.cwd: ", 0), 0u) << r.error().what();
}

// In a child: chroot into DIR/root while the working directory stays DIR, outside the new root;
// the check must say EXDEV there and 0 once the child has changed to "/".
TEST(BoxCwd, GetcwdCheckSeesADirectoryOutsideTheRoot) {
  char tmpl[] = "/tmp/kern-box-cwd-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl, root = dir + "/root";
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::geteuid() != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(90);
    if (::chdir(dir.c_str()) != 0 || ::chroot("root") != 0) _exit(91);
    int outside = cwd_inside_root_raw();
    if (::chdir("/") != 0) _exit(92);
    int inside = cwd_inside_root_raw();
    _exit(outside == EXDEV && inside == 0 ? 0 : outside == 0 ? 10 : 11);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::rmdir(root.c_str());
  ::rmdir(dir.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 90) KERN_SKIP_UNLESS_REQUIRED("userns", "no unprivileged user namespace for the chroot");
  EXPECT_NE(WEXITSTATUS(status), 10) << "a working directory outside the root passed the check";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace kern
