// The -t terminal made inside the box; see terminal.h.
#include "runtime/box/terminal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/sys/fd_passing.h"

namespace kern {

BoxTerminal make_box_terminal(int sock, const struct winsize* size) {
  BoxTerminal t;
  auto failed = [&](int err, const char* what, int close_fd) {
    if (close_fd >= 0) ::close(close_fd);
    t.slave = -1;
    t.err = err;
    t.what = what;
    return t;
  };
  // The box's devpts (mounted with newinstance by the mount plan), never the caller's.
  int m = ::open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return failed(errno, "open /dev/pts/ptmx", -1);
  int unlock = 0;
  if (::ioctl(m, TIOCSPTLCK, &unlock) != 0) return failed(errno, "ioctl TIOCSPTLCK", m);
  // Sized before the workload starts, so that its first look at the window is already right.
  if (size != nullptr && ::ioctl(m, TIOCSWINSZ, size) != 0) return failed(errno, "ioctl TIOCSWINSZ", m);
  // The peer by the master's fd, not by a path in /dev/pts.
  int s = ::ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) return failed(errno, "ioctl TIOCGPTPEER", m);
  int r = sys::send_fd_raw(sock, m);
  ::close(m);
  if (r != 0) {
    ::close(s);
    return failed(r, "sendmsg (the terminal's master)", -1);
  }
  t.slave = s;
  return t;
}

}  // namespace kern
