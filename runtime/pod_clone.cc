// Cloning box init into a pod; see pod_clone.h.
#include "runtime/pod_clone.h"

#include <linux/sched.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include "runtime/sys/fd_passing.h"
#include "runtime/sys/proc_stat.h"

namespace kern {

Result<UniqueFd> open_pod_holder(pid_t pid, uint64_t start_time) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return fail_errno("pidfd_open " + std::to_string(pid) + " (the pod's holder)");
  UniqueFd owned(fd);
  // Read after the pidfd is held: the pidfd names the process whose start time is checked.
  if (sys::process_start_time(pid) != start_time)
    return fail(ErrorKind::setup, ESRCH, "the pod's holder (pid " + std::to_string(pid) + ") is gone");
  return owned;
}

pid_t clone_into_pod(int holder_pidfd, int ns_flags, unsigned long long flags, int cgroup_fd, int* pidfd) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  pid_t mid = ::fork();
  if (mid < 0) {
    int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    errno = e;
    return -1;
  }
  if (mid == 0) {
    ::close(sv[0]);
    int err = 0;
    if (::setns(holder_pidfd, CLONE_NEWUSER | ns_flags) != 0) {
      err = errno;
    } else {
      struct clone_args args;
      std::memset(&args, 0, sizeof args);
      int fd = -1;
      args.flags = flags | CLONE_PARENT | CLONE_PIDFD;
      args.pidfd = reinterpret_cast<uint64_t>(&fd);
      // clone3 takes no exit signal with CLONE_PARENT: box init gets the intermediate's, SIGCHLD.
      args.exit_signal = 0;
      if (cgroup_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = static_cast<uint64_t>(cgroup_fd);
      }
      pid_t pid = static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
      if (pid == 0) {
        ::close(sv[1]);
        return 0;  // box init, the launcher's child
      }
      if (pid > 0) {
        int32_t word[2] = {pid, 0};
        _exit(sys::send_with_fd_raw(sv[1], word, sizeof word, fd) == 0 ? 0 : 1);
      }
      err = errno;
    }
    int32_t word[2] = {0, err};
    (void)!::send(sv[1], word, sizeof word, 0);
    _exit(1);
  }
  ::close(sv[1]);
  int32_t word[2] = {0, EIO};
  std::vector<UniqueFd> fds;
  ssize_t n = sys::recv_keeping_fds(sv[0], word, sizeof word, fds);
  int recv_err = errno;
  ::close(sv[0]);
  while (::waitpid(mid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof word)) {
    errno = n < 0 ? recv_err : EIO;
    return -1;
  }
  if (word[0] <= 0 || fds.empty()) {
    errno = word[1] != 0 ? word[1] : EIO;
    return -1;
  }
  *pidfd = fds[0].release();
  return word[0];
}

}  // namespace kern
