// BoxSession: one box's life, seen from the process that runs it, written once for every client
// that starts a box: the foreground `kern box` (launcher.cc), a detached box's supervisor and each
// box of its restart policy (runtime/detached/), a warm kernel's supervisor (runtime/kernel/).
// Each client adds only its own part around it: the foreground box its terminal relay, the
// supervisor its log ring, clients and restart policy, the kernel its cell protocol.
//
//   KERN_TRY_ASSIGN(auto s, BoxSession::start(spec, {runtime_dir, scratch, timing, winsize}));
//   reg.write(s->started_record());
//   s->announce_started(timing);       // enforcement read back, started fd, report fd, timing
//   ... the client's watch over s->box() (supervise(), the supervisor loop, the cell machine) ...
//   SessionEnd end = s->end(timed_out);  // reaped, torn down, helpers stopped
//   s->announce_end(end);              // the exited record, the audit's tally
//
// start: the network's helpers (--net private's pasta, --egress-allow's relay) -> BoxHandle::start
// -> the seccomp auditor (KERN_SECCOMP=allowlist-audit) -> the lockdown record that `kern exec`
// and `kern cp` join the box by. Nothing is left behind when it fails. Launcher side.
#pragma once

#include <sys/ioctl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/box_handle.h"
#include "runtime/box_lockdown.h"
#include "runtime/box_spec.h"
#include "runtime/cgroup/enforcement.h"
#include "runtime/launch_plan.h"
#include "runtime/net/box_network.h"
#include "runtime/registry.h"
#include "runtime/report.h"
#include "runtime/seccomp_audit.h"
#include "runtime/sys/error.h"
#include "runtime/timing.h"

namespace kern {

struct SessionStart {
  std::string runtime_dir;
  std::string scratch_dir;  // the box's scratch (its registration's, or a kept upper's parent)
  TimingPage* timing = nullptr;
  std::optional<struct winsize> winsize;  // -t: the terminal's size
};

struct SessionEnd {
  BoxExit exit;
  ExitedInfo info;
};

class BoxSession {
 public:
  // `spec` is the client's and must outlive the session (nothing of it is copied on the start
  // path); a client that changes it between boxes (a detached supervisor: the started and report
  // fds after the first box, the name at kern rename) changes what the session says.
  static Result<std::unique_ptr<BoxSession>> start(const BoxSpec& spec, const SessionStart& s);
  ~BoxSession();
  BoxSession(const BoxSession&) = delete;
  BoxSession& operator=(const BoxSession&) = delete;

  BoxHandle& box() { return *box_; }
  const BoxHandle& box() const { return *box_; }
  const BoxSpec& spec() const { return spec_; }

  // The registry record of the box that has just started, owned by this process.
  BoxRecord started_record() const;
  // Reads the enforcement back, writes the started fd's bytes and the report fd's started
  // record, warns of skipped steps, prints the timing line; then ends whatever the cgroup's
  // earlier users left in it. Returns the enforcement read back.
  Enforcement announce_started(TimingPage* timing);
  // Once box init has exited (the client's watch returned): reaps it (a box that cannot be
  // reaped counts as killed, said in a warning), tears the box down and stops the network's
  // helpers. `timed_out`: the client's --timeout fired. The cgroup's memory events are read when
  // the report fd wants them, or `memory_events` (the supervisor's oom event, the kernel's
  // out-of-memory answer).
  SessionEnd end(bool timed_out, bool memory_events = false);
  // The exited record on the report fd, and the seccomp audit's records and tally.
  void announce_end(const SessionEnd& e);
  // KERN_SECCOMP=allowlist-audit: the tally announce_end() prints, as a whole "kern: note: ..."
  // or "kern: warning: ..." line, for a client whose stderr is no one's (a detached box's
  // supervisor puts it in the box's log); else empty.
  std::string audit_tally_line() const;
  // kern rename: the client has renamed its spec; the lockdown record follows.
  Status rename(const std::string& runtime_dir);

 private:
  explicit BoxSession(const BoxSpec& spec) : spec_(spec), network_(spec_) {}

  const BoxSpec& spec_;
  uint64_t start_ns_ = 0;
  net::BoxNetwork network_;  // before the box: its helpers outlive the box's teardown
  LaunchPlan plan_;
  std::optional<BoxHandle> box_;
  std::unique_ptr<SeccompAuditor> auditor_;
  std::vector<AuditedCall> audited_;
  std::optional<LockdownRecord> lockdown_;
};

}  // namespace kern
