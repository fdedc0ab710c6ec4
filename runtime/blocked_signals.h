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

// The signals kern passes on to a box's workload, one set for every process on the way: the
// launcher (supervise()), a detached box's supervisor, box init, kern exec. Whatever a service may
// name as its --stop-signal or be sent by kern kill: the usual ones, SIGPWR, SIGALRM, SIGURG and
// every real-time signal (systemd stops on SIGRTMIN+3). Not the ones kern's own processes need:
// SIGCHLD, SIGPIPE, the faults, SIGSTOP/SIGKILL (which no process can catch) and the terminal's
// job control (SIGTSTP, SIGTTIN, SIGTTOU).
inline constexpr int kForwardedSignals[] = {SIGTERM, SIGINT, SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                            SIGWINCH, SIGCONT, SIGPWR, SIGALRM, SIGURG};

template <typename F>
inline void for_each_forwarded_signal(F f) {
  for (int s : kForwardedSignals) f(s);
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) f(s);
}

inline void add_forwarded_signals(sigset_t* set) {
  for_each_forwarded_signal([set](int s) { sigaddset(set, s); });
}

inline bool forwarded_signal(int sig) {
  for (int s : kForwardedSignals)
    if (s == sig) return true;
  return sig >= SIGRTMIN && sig <= SIGRTMAX;
}

// What a process that watches a box blocks: the forwarded signals and SIGCHLD.
inline sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  add_forwarded_signals(&set);
  return set;
}

class BlockedSignals {
 public:
  BlockedSignals() {
    sigset_t set = supervised_signals();
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
