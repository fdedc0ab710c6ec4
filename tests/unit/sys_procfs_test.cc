// open_procfs_file refuses a procfs file covered by a mount, and a /proc that is not procfs,
// where a plain open(2) of the same path is redirected (runc's CVE-2025-52881 and CVE-2019-16884
// classes). Run in a child with user and mount namespaces of its own.
#include "runtime/sys/procfs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "test_require.h"

namespace {

using kern::sys::open_procfs_file;

// Bits of the child's exit code: what it saw, or 100 when it could not set up.
enum : int {
  kControlOpened = 1,       // an uncovered procfs file opens
  kCoveredRefused = 2,      // the same file with a bind over it: EXDEV
  kPlainOpenRedirected = 4, // while open(2) of the path reads the bound file
  kFakeProcRefused = 8,     // a tmpfs over /proc: EXDEV
};

int read_byte(int fd) {
  char c = 0;
  return ::read(fd, &c, 1) == 1 ? c : -1;
}

int child(const char* marker) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return 100;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 100;
  int bits = 0;
  const char* rel = "sys/kernel/hostname";
  const char* path = "/proc/sys/kernel/hostname";
  int fd = open_procfs_file(rel, O_RDONLY);
  if (fd >= 0) {
    bits |= kControlOpened;
    ::close(fd);
  }
  if (::mount(marker, path, nullptr, MS_BIND, nullptr) != 0) return 100;
  fd = open_procfs_file(rel, O_RDONLY);
  if (fd == -EXDEV) bits |= kCoveredRefused;
  if (fd >= 0) ::close(fd);
  fd = ::open(path, O_RDONLY);
  if (fd >= 0 && read_byte(fd) == 'M') bits |= kPlainOpenRedirected;
  if (fd >= 0) ::close(fd);
  if (::mount("tmpfs", "/proc", "tmpfs", 0, "size=4k") != 0) return 100;
  fd = open_procfs_file("self/status", O_RDONLY);
  if (fd == -EXDEV) bits |= kFakeProcRefused;
  if (fd >= 0) ::close(fd);
  return bits;
}

TEST(Procfs, ACoveredFileOrAFakeProcIsRefusedWhereOpenIsRedirected) {
  char marker[] = "/tmp/kern-procfs-test-XXXXXX";
  int mfd = ::mkstemp(marker);
  ASSERT_GE(mfd, 0);
  ASSERT_EQ(::write(mfd, "M", 1), 1);
  ::close(mfd);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(child(marker));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::unlink(marker);
  ASSERT_TRUE(WIFEXITED(status));
  int bits = WEXITSTATUS(status);
  if (bits == 100) KERN_SKIP_UNLESS_REQUIRED("userns", "no user and mount namespace to bind in here");
  EXPECT_TRUE(bits & kControlOpened) << "an uncovered procfs file did not open";
  EXPECT_TRUE(bits & kPlainOpenRedirected) << "discriminant: open(2) of the covered path reads the bound file";
  EXPECT_TRUE(bits & kCoveredRefused) << "a procfs file covered by a bind was opened";
  EXPECT_TRUE(bits & kFakeProcRefused) << "a tmpfs over /proc was taken for procfs";
}

}  // namespace
