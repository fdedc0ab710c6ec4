// The launcher's watch over a running box: forwards the caller's signals to box init, enforces
// --timeout (box_timeout.h) and relays a pty, until box init exits (the caller
// then reaps it through its BoxHandle). Parent only.
#pragma once

#include <termios.h>

#include <cstdint>

#include "runtime/box_timeout.h"
#include "runtime/sys/error.h"

namespace kern {

struct SuperviseInput {
  int pidfd = -1;        // of box init, from clone3
  uint64_t timeout_ms = 0;
  int signal_fd = -1;    // signalfd over the launcher's blocked signals
  int pty_master = -1;   // -t: relay between it and the caller's stdin/stdout
  bool interactive = false;
};

struct SuperviseResult {
  bool timed_out = false;      // the timeout's SIGTERM was sent
  bool killed_after_grace = false;  // and the box was still there kTimeoutGraceMs later: SIGKILL
};

Result<SuperviseResult> supervise(const SuperviseInput& in);

// The caller's terminal in raw mode while supervise() relays a pty to it (kern box -it, kern exec
// -it, kern-oci run with process.terminal and no console socket); restored on every way out.
// Does nothing when `want` is false or stdin is not a terminal.
class RawCallerTerminal {
 public:
  explicit RawCallerTerminal(bool want);
  ~RawCallerTerminal();
  RawCallerTerminal(const RawCallerTerminal&) = delete;
  RawCallerTerminal& operator=(const RawCallerTerminal&) = delete;

 private:
  struct termios saved_ {};
  bool active_ = false;
};

}  // namespace kern
