// What a driver's main thread is doing, as the kernel reports it in /proc/PID/task/PID/syscall:
// how the supervisor confirms that the end of a cell came from the driver's own end path (see
// cell_machine.h, DriverView). Supervisor process only; classify_driver_syscall is pure.
#pragma once

#include <sys/types.h>

#include <string_view>

#include "runtime/kernel/cell_machine.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::kernel {

// `text` is one /proc/PID/syscall line; `frame_written`: the supervisor has written the whole
// frame (see Supervisor::look_at_driver for why no byte count of the pipe is needed).
//   blocked in read/readv/pread64 on the cell pipe (fd 3):  waiting if frame_written, else inside
//   running, blocked outside a call (-1), in a futex, or in write/writev/send*/sendmsg: between
//   blocked in any other call:                              inside
DriverView classify_driver_syscall(std::string_view text, bool frame_written);

class DriverWatch {
 public:
  // Opens /proc/PID/task/PID/syscall of the driver (its main thread's tid is its pid) and reads
  // it once: an Error when this host does not let the supervisor read it.
  static Result<DriverWatch> open(pid_t driver);
  // One look (a pread of the open file). A driver that is gone reads as `between`: its exit,
  // not this, ends the cell.
  DriverView look(bool frame_written) const;

 private:
  UniqueFd fd_;
};

}  // namespace kern::kernel
