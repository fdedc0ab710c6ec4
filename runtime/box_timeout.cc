// A box's --timeout; see box_timeout.h.
#include "runtime/box_timeout.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace kern {

void arm_timer(int tfd, uint64_t ms) {
  struct itimerspec its;
  std::memset(&its, 0, sizeof its);
  its.it_value.tv_sec = static_cast<time_t>(ms / 1000);
  its.it_value.tv_nsec = static_cast<long>(ms % 1000) * 1000000L;
  ::timerfd_settime(tfd, 0, &its, nullptr);
}

Result<TimeoutClock> TimeoutClock::start(uint64_t ms) {
  TimeoutClock c;
  if (ms == 0) return c;
  c.fd_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!c.fd_) return fail_errno("timerfd_create CLOCK_MONOTONIC");
  arm_timer(c.fd_.get(), ms);
  return c;
}

void TimeoutClock::fired(const std::function<void(int sig)>& send) {
  uint64_t ticks;
  if (::read(fd_.get(), &ticks, sizeof ticks) != static_cast<ssize_t>(sizeof ticks)) return;
  if (stage_ == 0) {
    send(SIGTERM);
    arm_timer(fd_.get(), kTimeoutGraceMs);
  } else if (stage_ == 1) {
    send(SIGKILL);
  } else {
    return;
  }
  ++stage_;
}

}  // namespace kern
