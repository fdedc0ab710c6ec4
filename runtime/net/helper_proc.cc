// Helper processes' first steps; see helper_proc.h.
#include "runtime/net/helper_proc.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <vector>

#include "runtime/sys/close_fds.h"

namespace kern::net {

// The caller's terminal and pipes, the box's channel and the other helpers' ends are not the
// helper's to hold; its stdio reads and writes /dev/null.
void become_helper(pid_t launcher, std::initializer_list<int> keep) {
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int i = 0; i < 3 && null >= 0; ++i) ::dup3(null, i, 0);
  std::vector<int> k(keep);
  (void)sys::close_fds_except_raw(k.data(), k.size());
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(0);
}

int pidfd_of(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace kern::net
