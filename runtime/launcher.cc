// The foreground box; see launcher.h. Launcher side only.
#include "runtime/launcher.h"

#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>

#include "runtime/blocked_signals.h"
#include "runtime/box_handle.h"
#include "runtime/box_lockdown.h"
#include "runtime/net/egress.h"
#include "runtime/registry.h"
#include "runtime/report.h"
#include "runtime/supervisor.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/userns.h"

namespace kern {
namespace {

// The caller's terminal in raw mode while a -t box runs; restored on every way out.
class RawTerminal {
 public:
  void enter() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    struct termios raw = saved_;
    ::cfmakeraw(&raw);
    if (::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0) active_ = true;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  struct termios saved_ {};
  bool active_ = false;
};

void print_timing(const std::vector<std::pair<std::string, double>>& phases) {
  std::string line = "timing:";
  for (const auto& [name, ms] : phases) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s=%.3fms", name.c_str(), ms);
    line += buf;
  }
  log::note(line);
}

BoxRecord record_for(const BoxSpec& spec, const BoxHandle& box) {
  BoxRecord rec;
  rec.name = spec.name;
  rec.launcher_pid = ::getpid();
  rec.launcher_start = sys::own_start_time();
  rec.init_pid = box.pid();
  rec.cgroup = box.cgroup() ? box.cgroup()->path() : "";
  rec.image = spec.image_ref;
  for (const auto& a : spec.argv) rec.command += (rec.command.empty() ? "" : " ") + a;
  rec.started_unix = ::time(nullptr);
  return rec;
}

}  // namespace

Result<int> run_box(const BoxSpec& spec, TimingPage* timing) {
  uint64_t t0 = monotonic_ns();
  KERN_TRY_ASSIGN(std::string runtime_dir, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRegistration reg, BoxRegistration::claim(runtime_dir, spec.name));
  LaunchPlan plan = prepare(spec);

  StartContext ctx{runtime_dir, reg.scratch_dir(), timing, std::nullopt, {}};
  // Declared before the box: destroyed (the helpers killed) after its teardown.
  std::unique_ptr<net::EgressHelpers> egress;
  if (!spec.egress_allow.empty())
    ctx.before_release = [&](int pidfd) -> Result<void> {
      KERN_TRY_ASSIGN(egress, net::EgressHelpers::start(spec, pidfd));
      return {};
    };
  if (spec.tty) {
    struct winsize ws;
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) ctx.winsize = ws;
  }
  BlockedSignals sigs;
  if (sigs.fd() < 0) return fail_errno("signalfd");
  // A caller that stops reading the started fd or the report fd must not kill kern.
  ::signal(SIGPIPE, SIG_IGN);
  KERN_TRY_ASSIGN(BoxHandle box, BoxHandle::start(plan, ctx));
  (void)reg.write(record_for(spec, box));
  auto lockdown = LockdownRecord::publish(runtime_dir, plan, box.pid());  // for kern exec, until the end
  if (!lockdown) log::warning("kern exec will not reach this box: " + lockdown.error().what());

  // Without a per-box cgroup whatever was asked for is reported as not in force.
  const BoxCgroup* cg = box.cgroup();
  Enforcement enf = cg ? cg->read_back(spec.limits) : uncapped_enforcement(spec.limits);
  if (spec.started_fd >= 0) {
    unsigned char bytes[2] = {0x01, started_memory_byte(enf)};
    (void)sys::write_all_raw(spec.started_fd, bytes, 2);
  }
  for (const auto& sk : box.skipped())
    log::warning("the box runs without " + sk.step + " (" + errno_name(sk.err) + ")");
  if (spec.report_fd >= 0 || spec.timing) {
    StartedInfo si{box.pid(), enf, describe_id_map(::getuid(), spec.uid_range),
                   timing ? phase_durations(*timing) : std::vector<std::pair<std::string, double>>{}};
    for (const auto& sk : box.skipped()) si.skipped.push_back({sk.step, sk.err});
    if (spec.report_fd >= 0) write_report_line(spec.report_fd, started_record(spec, si));
    if (spec.timing) print_timing(si.phases_ms);
  }
  if (cg) cg->reap_others();

  RawTerminal raw;
  if (box.pty_master() >= 0 && spec.interactive) raw.enter();
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

  ExitedInfo ei;
  ei.exit_code = bx.exit_code;
  ei.signal = bx.signal;
  ei.timed_out = sres.timed_out;
  // The kernel's counters are read only for the report fd, the one place that shows them.
  if (cg && spec.report_fd >= 0) ei.events = cg->events();
  ei.wall_ms = static_cast<double>(monotonic_ns() - t0) / 1e6;
  box.teardown();
  if (egress) egress->stop();
  if (spec.report_fd >= 0) write_report_line(spec.report_fd, exited_record(spec, ei));
  // Entries of boxes whose launcher was SIGKILLed are reaped here, after this box is done, so
  // that the next start cleans up without paying for it before its own workload runs.
  reg.release();
  (void)list_boxes(runtime_dir, true);
  return bx.exit_code;
}

}  // namespace kern
