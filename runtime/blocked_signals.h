// The caller's signals while kern supervises a process (a box's init for kern box, the exec'd
// process for kern exec): blocked from before the clone, so that none sent during start-up is
// lost, and taken from a signalfd that supervise() (launcher_loop.h) reads and forwards. Box init
// installs its own handlers and the workload resets its mask. The old mask comes back on
// destruction. Launcher side.
#pragma once

#include <sys/signalfd.h>

#include <csignal>

#include "runtime/sys/unique_fd.h"

namespace kern {

inline constexpr int kSupervisedSignals[] = {SIGCHLD, SIGTERM, SIGINT,  SIGHUP,
                                             SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

class BlockedSignals {
 public:
  BlockedSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kSupervisedSignals) sigaddset(&set, s);
    ::sigprocmask(SIG_BLOCK, &set, &old_);
    fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  ~BlockedSignals() { ::sigprocmask(SIG_SETMASK, &old_, nullptr); }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  int fd() const { return fd_.get(); }
  // The mask from before: what a forked child that execs restores.
  const sigset_t& old_mask() const { return old_; }

 private:
  sigset_t old_;
  UniqueFd fd_;
};

}  // namespace kern
