// One box's life for every client; see box_session.h. Launcher side.
#include "runtime/box_session.h"

#include <csignal>

#include "runtime/box_announce.h"
#include "runtime/sys/log.h"

namespace kern {

Result<std::unique_ptr<BoxSession>> BoxSession::start(const BoxSpec& spec, const SessionStart& s) {
  std::unique_ptr<BoxSession> bs(new BoxSession(spec));
  bs->start_ns_ = monotonic_ns();
  bs->plan_ = prepare(bs->spec_);
  StartContext ctx{s.runtime_dir, s.scratch_dir, s.timing, s.winsize, {}};
  ctx.before_release = bs->network_.before_release();
  KERN_TRY_ASSIGN(BoxHandle box, BoxHandle::start(bs->plan_, ctx));
  bs->box_.emplace(std::move(box));
  if (bs->plan_.seccomp_audit) {
    KERN_TRY_ASSIGN(bs->auditor_, SeccompAuditor::start(bs->box_->take_audit_listener()));
    log::warning_unsilenced("KERN_SECCOMP=allowlist-audit: this box is NOT locked down: system calls outside the "
                            "allowlist run and are recorded instead of refused (the killed and errno rules still apply)");
  }
  // For kern exec and kern cp, until the end: a box they cannot join still runs.
  if (auto l = LockdownRecord::publish(s.runtime_dir, bs->plan_, bs->box_->pid())) bs->lockdown_.emplace(std::move(*l));
  else log::warning("kern exec will not reach this box: " + l.error().what());
  return bs;
}

BoxSession::~BoxSession() {
  lockdown_.reset();
  if (box_) box_->teardown();
  network_.stop();
}

BoxRecord BoxSession::started_record() const { return started_box_record(spec_, *box_); }

Enforcement BoxSession::announce_started(TimingPage* timing) {
  Enforcement e = kern::announce_started(spec_, *box_, timing);
  if (const BoxCgroup* cg = box_->cgroup()) cg->reap_others();
  return e;
}

SessionEnd BoxSession::end(bool timed_out, bool memory_events) {
  SessionEnd e;
  auto bx = box_->reap();
  if (!bx) log::warning("box \"" + spec_.name + "\": " + bx.error().what() + ": counted as killed (137)");
  e.exit = bx ? *bx : BoxExit{137, SIGKILL};
  e.info = exited_info(spec_, *box_, e.exit, timed_out, start_ns_);
  if (memory_events && !e.info.events.valid && box_->cgroup()) e.info.events = box_->cgroup()->events();
  lockdown_.reset();
  box_->teardown();
  network_.stop();
  if (auditor_) audited_ = auditor_->finish();
  return e;
}

std::string BoxSession::audit_tally_line() const {
  if (!auditor_) return {};
  return std::string(audited_.empty() ? "kern: note: " : "kern: warning: ") + audit_summary(audited_) + "\n";
}

Status BoxSession::rename(const std::string& runtime_dir) {
  if (lockdown_) return lockdown_->rename_to(runtime_dir, spec_.name);
  return {};
}

void BoxSession::announce_end(const SessionEnd& e) {
  if (auditor_) {
    for (const auto& c : audited_) write_report_line(spec_.report_fd, audit_record(spec_.name, c));
    if (audited_.empty()) log::note(audit_summary(audited_));
    else log::warning(audit_summary(audited_));
  }
  announce_exited(spec_, e.info);
}

}  // namespace kern
