// The terminal of a -t box, made by box init after pivot_root (runs in the child only): a pty of
// the box's own devpts instance, so that ttyname() and `tty` find its name inside the box. Its
// master goes to the launcher over a unix socket; the launcher relays it to the caller.
#pragma once

#include <sys/ioctl.h>

namespace kern {

struct BoxTerminal {
  int slave = -1;            // the workload's controlling terminal, or -1 on failure
  int err = 0;               // the errno of the failed step
  const char* what = nullptr;  // the failed step, for the child's report
};

// Opens /dev/pts/ptmx, unlocks it, sizes it like the caller's terminal (when `size` is given),
// opens its peer and sends the master to `sock`. Allocates nothing.
BoxTerminal make_box_terminal(int sock, const struct winsize* size);

}  // namespace kern
