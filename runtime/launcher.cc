// The foreground box; see launcher.h. Launcher side only.
#include "runtime/launcher.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <memory>

#include "runtime/blocked_signals.h"
#include "runtime/box_session.h"
#include "runtime/launcher_loop.h"
#include "runtime/registry.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern {

Result<int> run_box(const BoxSpec& spec, TimingPage* timing, const std::string& kept_scratch) {
  KERN_TRY_ASSIGN(std::string runtime_dir, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRegistration reg, BoxRegistration::claim(runtime_dir, spec.name));
  SessionStart start{runtime_dir, spec.upper_on_host && !kept_scratch.empty() ? kept_scratch : reg.scratch_dir(),
                     timing, std::nullopt};
  if (spec.tty) {
    struct winsize ws;
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) start.winsize = ws;
  }
  BlockedSignals sigs;
  if (sigs.fd() < 0) return fail_errno("signalfd");
  // A caller that stops reading the started fd or the report fd must not kill kern.
  ::signal(SIGPIPE, SIG_IGN);
  KERN_TRY_ASSIGN(std::unique_ptr<BoxSession> session, BoxSession::start(spec, start));
  BoxHandle& box = session->box();
  (void)reg.write(session->started_record());
  session->announce_started(timing);

  RawCallerTerminal raw(box.pty_master() >= 0 && spec.interactive);
  SuperviseInput sin{box.pidfd(), spec.timeout_ms, sigs.fd(), box.pty_master(), spec.interactive};
  KERN_TRY_ASSIGN(SuperviseResult sres, supervise(sin));
  SessionEnd end = session->end(sres.timed_out);
  if (sres.timed_out) {
    // The one line that tells a 143 or 137 of the timeout from a kill by someone else.
    uint64_t ms = spec.timeout_ms;
    std::string after = ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
    log::note("--timeout " + after + " reached: sent SIGTERM to the box" +
              (sres.killed_after_grace ? std::string(", and SIGKILL ") + std::to_string(kTimeoutGraceMs / 1000) +
                                             " s later"
                                       : std::string()));
  }
  session->announce_end(end);
  // No other box's entry is looked at here: a launcher's end costs the same with 1 or 200 boxes
  // running. Entries left by a SIGKILLed launcher go at the next kern ps, kern stop or kern gc,
  // or when a box claims their name.
  reg.release();
  return end.exit.exit_code;
}

}  // namespace kern
