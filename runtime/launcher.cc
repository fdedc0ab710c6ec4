// The foreground box; see launcher.h. Launcher side only.
#include "runtime/launcher.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <memory>

#include "runtime/blocked_signals.h"
#include "runtime/box_announce.h"
#include "runtime/box_handle.h"
#include "runtime/box_lockdown.h"
#include "runtime/net/box_network.h"
#include "runtime/registry.h"
#include "runtime/report.h"
#include "runtime/seccomp_audit.h"
#include "runtime/launcher_loop.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern {

Result<int> run_box(const BoxSpec& spec, TimingPage* timing) {
  uint64_t t0 = monotonic_ns();
  KERN_TRY_ASSIGN(std::string runtime_dir, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRegistration reg, BoxRegistration::claim(runtime_dir, spec.name));
  LaunchPlan plan = prepare(spec);

  StartContext ctx{runtime_dir, reg.scratch_dir(), timing, std::nullopt, {}};
  // Declared before the box: destroyed (the helpers killed) after its teardown.
  net::BoxNetwork network(spec);
  ctx.before_release = network.before_release();
  if (spec.tty) {
    struct winsize ws;
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) ctx.winsize = ws;
  }
  BlockedSignals sigs;
  if (sigs.fd() < 0) return fail_errno("signalfd");
  // A caller that stops reading the started fd or the report fd must not kill kern.
  ::signal(SIGPIPE, SIG_IGN);
  KERN_TRY_ASSIGN(BoxHandle box, BoxHandle::start(plan, ctx));
  std::unique_ptr<SeccompAuditor> auditor;
  if (plan.seccomp_audit) {
    KERN_TRY_ASSIGN(auditor, SeccompAuditor::start(box.take_audit_listener()));
    log::warning_unsilenced("KERN_SECCOMP=allowlist-audit: this box is NOT locked down: system calls outside the "
                 "allowlist run and are recorded instead of refused (the killed and errno rules still apply)");
  }
  (void)reg.write(started_box_record(spec, box));
  auto lockdown = LockdownRecord::publish(runtime_dir, plan, box.pid());  // for kern exec, until the end
  if (!lockdown) log::warning("kern exec will not reach this box: " + lockdown.error().what());
  announce_started(spec, box, timing);
  const BoxCgroup* cg = box.cgroup();
  if (cg) cg->reap_others();

  RawCallerTerminal raw(box.pty_master() >= 0 && spec.interactive);
  SuperviseInput sin{box.pidfd(), spec.timeout_ms, sigs.fd(), box.pty_master(), spec.interactive};
  KERN_TRY_ASSIGN(SuperviseResult sres, supervise(sin));
  KERN_TRY_ASSIGN(BoxExit bx, box.reap());
  if (sres.timed_out) {
    // The one line that tells a 143 or 137 of the timeout from a kill by someone else.
    uint64_t ms = spec.timeout_ms;
    std::string after = ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
    log::note("--timeout " + after + " reached: sent SIGTERM to the box" +
              (sres.killed_after_grace ? std::string(", and SIGKILL ") + std::to_string(kTimeoutGraceMs / 1000) +
                                             " s later"
                                       : std::string()));
  }

  ExitedInfo ei = exited_info(spec, box, bx, sres.timed_out, t0);
  box.teardown();
  network.stop();
  if (auditor) {
    std::vector<AuditedCall> calls = auditor->finish();
    for (const auto& c : calls) write_report_line(spec.report_fd, audit_record(spec.name, c));
    if (calls.empty()) log::note(audit_summary(calls));
    else log::warning(audit_summary(calls));
  }
  announce_exited(spec, ei);
  // No other box's entry is looked at here: a launcher's end costs the same with 1 or 200 boxes
  // running. Entries left by a SIGKILLed launcher go at the next kern ps, kern stop or kern gc,
  // or when a box claims their name.
  reg.release();
  return bx.exit_code;
}

}  // namespace kern
