// A box's --timeout, for whichever process watches the box (the foreground launcher's supervise(),
// a detached box's supervisor loop): a one-shot timerfd that, when it fires, sends SIGTERM to box
// init, arms itself again for the grace (kTimeoutGraceMs), and sends SIGKILL if it fires a second
// time. Written once so the two watches cannot disagree on what --timeout means (kern-box(1)).
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

// The grace between the timeout's SIGTERM and its SIGKILL (kern-box(1)).
inline constexpr unsigned kTimeoutGraceMs = 2000;

// Arms the one-shot timerfd `tfd` to fire in `ms` milliseconds (0 disarms it).
void arm_timer(int tfd, uint64_t ms);

class TimeoutClock {
 public:
  TimeoutClock() = default;
  // A clock that fires `ms` after now; with ms == 0 there is none and fd() is -1.
  static Result<TimeoutClock> start(uint64_t ms);

  int fd() const { return fd_.get(); }
  // The timerfd is readable: reads it and sends `send` the step that is due (SIGTERM, then
  // SIGKILL after the grace; nothing after that).
  void fired(const std::function<void(int sig)>& send);
  bool timed_out() const { return stage_ > 0; }
  bool killed_after_grace() const { return stage_ > 1; }

 private:
  UniqueFd fd_;
  int stage_ = 0;  // 0: nothing sent, 1: SIGTERM sent, 2: SIGKILL sent
};

}  // namespace kern
