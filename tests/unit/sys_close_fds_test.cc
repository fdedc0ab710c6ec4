// close_fds_except_raw (runtime/sys/close_fds.h): everything from 3 up is closed but the kept
// fds, in any order, with negative and duplicate entries ignored.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/sys/close_fds.h"

namespace kern::sys {
namespace {

TEST(CloseFds, KeepsExactlyTheListed) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fds[8];
    for (int& fd : fds) fd = ::open("/dev/null", O_RDONLY);  // the lowest free numbers
    int keep[] = {fds[5], -1, fds[1], fds[5], fds[7]};
    if (close_fds_except_raw(keep, 5) != 0) _exit(2);
    for (int i = 0; i < 8; ++i) {
      bool open = ::fcntl(fds[i], F_GETFD) >= 0;
      bool kept = i == 1 || i == 5 || i == 7;
      if (open != kept) _exit(10 + i);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "fd index " << WEXITSTATUS(status) - 10 << " in the wrong state";
}

}  // namespace
}  // namespace kern::sys
