// The launcher's supervision loop; see launcher_loop.h. Parent only.
#include "runtime/launcher_loop.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "runtime/sys/fdio.h"
#include "runtime/sys/resident.h"
#include "runtime/sys/unique_fd.h"

namespace kern {
namespace {

void send(int pidfd, int sig) { ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0); }

// Copies what is readable on `from` to `to`; false on EOF or error.
bool pump(int from, int to) {
  char buf[16384];
  ssize_t n = ::read(from, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  return sys::write_all_raw(to, buf, static_cast<size_t>(n)) == 0;
}

void copy_winsize(int pty_master) {
  struct winsize ws;
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) ::ioctl(pty_master, TIOCSWINSZ, &ws);
}

}  // namespace

RawCallerTerminal::RawCallerTerminal(bool want) {
  if (!want || !::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
  struct termios raw = saved_;
  ::cfmakeraw(&raw);
  active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

RawCallerTerminal::~RawCallerTerminal() {
  if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

// Hot: the loop the launcher waits in after dropping its code pages (runtime/sys/resident.cc).
[[gnu::hot]] Result<SuperviseResult> supervise(const SuperviseInput& in) {
  SuperviseResult res;
  KERN_TRY_ASSIGN(TimeoutClock timeout, TimeoutClock::start(in.timeout_ms));
  bool stdin_open = in.pty_master >= 0 && in.interactive;
  // Box init sized the terminal before the workload started; only later changes are copied.
  bool pty_open = in.pty_master >= 0;
  int wait_ms = sys::kDropCodePagesAfterMs;  // then -1: the code pages go once

  for (;;) {
    struct pollfd p[5];
    int n = 0;
    p[n++] = {in.pidfd, POLLIN, 0};
    p[n++] = {in.signal_fd, POLLIN, 0};
    int ti = -1, mi = -1, si = -1;
    if (timeout.fd() >= 0) { ti = n; p[n++] = {timeout.fd(), POLLIN, 0}; }
    if (pty_open) { mi = n; p[n++] = {in.pty_master, POLLIN, 0}; }
    if (stdin_open) { si = n; p[n++] = {STDIN_FILENO, POLLIN, 0}; }
    int ready = ::poll(p, static_cast<nfds_t>(n), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll");
    }
    if (ready == 0) {
      sys::drop_code_pages();
      wait_ms = -1;
      continue;
    }
    if (mi >= 0 && (p[mi].revents & (POLLIN | POLLHUP | POLLERR)))
      pty_open = pump(in.pty_master, STDOUT_FILENO);
    if (si >= 0 && (p[si].revents & (POLLIN | POLLHUP | POLLERR)))
      stdin_open = pump(STDIN_FILENO, in.pty_master);
    if (p[1].revents & POLLIN) {
      struct signalfd_siginfo si_info;
      if (::read(in.signal_fd, &si_info, sizeof si_info) == sizeof si_info) {
        int sig = static_cast<int>(si_info.ssi_signo);
        if (sig == SIGWINCH && in.pty_master >= 0) copy_winsize(in.pty_master);
        else if (sig != SIGCHLD) send(in.pidfd, sig);
      }
    }
    if (ti >= 0 && (p[ti].revents & POLLIN)) {
      timeout.fired([&](int sig) { send(in.pidfd, sig); });
      res.timed_out = timeout.timed_out();
      res.killed_after_grace = timeout.killed_after_grace();
    }
    if (p[0].revents & POLLIN) {
      // Box init has exited; the caller reaps it (BoxHandle::reap).
      while (pty_open) {  // what the workload wrote last is still in the pty
        struct pollfd q = {in.pty_master, POLLIN, 0};
        if (::poll(&q, 1, 0) <= 0 || !(q.revents & POLLIN)) break;
        pty_open = pump(in.pty_master, STDOUT_FILENO);
      }
      return res;
    }
  }
}

}  // namespace kern
