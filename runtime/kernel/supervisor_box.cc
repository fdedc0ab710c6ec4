// The supervisor's box side: the started box, the driver's first message (readiness), box init's
// exit (reaped through the BoxHandle, the OOM count from the box's cgroup), the kill. Supervisor process only; see supervisor_loop.h.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "runtime/box_join.h"
#include "runtime/kernel/supervisor_loop.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

}  // namespace

// The interpreter has exec'd (BoxHandle::start returned): its pid is box init's first child.
void Supervisor::on_box_started() {
  memory_verdict_ = box_.memory_verdict;
  init_pid_ = box_.box().pid();
  if (cfg_.lang == Lang::repl) {
    driver_pid_ = first_child_of(init_pid_);
    if (repl_) repl_->start(driver_pid_, box_.in_w.get());
    arm_check(1000000ull);
  }
  try_ready();
}

void Supervisor::try_ready() {
  if (cells_.state() != KernelState::starting || init_pid_ == 0) return;
  if (cfg_.lang == Lang::repl) return;  // on_repl_timer decides
  if (early_packet_.empty()) return;
  std::string packet = std::move(early_packet_);
  early_packet_.clear();
  if (sys::parent_pid(early_sender_) != init_pid_ || packet.size() < 2 || packet[0] != 'W') {
    ++forged_;
    return;
  }
  auto ready = parse_driver_ready(std::string_view(packet).substr(1));
  if (!ready) {
    // The driver itself (init's child) said something else: no cell could run on it.
    start_error_ = Error(ErrorKind::setup, EPROTO,
                         ready.error().message() + ": " + log::quoted(std::string_view(packet).substr(1, 200)));
    kill_box();
    return;
  }
  driver_pid_ = early_sender_;
  ready_info_ = *ready;
  become_ready();
}

void Supervisor::become_ready() {
  if (cells_.confirm_idle()) {
    auto w = DriverWatch::open(driver_pid_);
    if (w) {
      watch_ = std::move(*w);
    } else {
      // Without it the end of a cell is the driver pid's message with the nonce, as for node.
      cells_.set_confirm_idle(false);
      std::string l = "kern: warning: cannot watch the driver's main thread (" + w.error().what() +
                      "): a thread an earlier cell left running could end a later cell\n";
      (void)sys::write_all_raw(hooks_.diag_fd, l.data(), l.size());
    }
  }
  check_backoff_ns_ = kFirstCheckNs;
  cells_.ready();
  disarm_timer(timer_.get());
  json j = {{"status", "ready"}, {"name", cfg_.name}, {"lang", lang_name(cfg_.lang)}};
  if (ready_info_.contains("version")) j["version"] = ready_info_["version"];
  j["pid"] = ::getpid();
  j["memory"] = memory_verdict_name();
  j["startup_ms"] = static_cast<double>(now_ns() - start_ns_) / 1e6;
  if (hooks_.on_ready) hooks_.on_ready(j);
}

std::string Supervisor::memory_verdict_name() const {
  switch (memory_verdict_) {
    case 1: return "enforced";
    case 2: return "not_enforced";
    default: return "undetermined";
  }
}

void Supervisor::on_box_exit() {
  out_drained_ = err_drained_ = false;
  // The kernel's own count of OOM kills in the box's cgroup, read before the cgroup goes.
  SessionEnd end = box_.session->end(false, true);
  box_alive_ = false;
  int code = end.exit.exit_code;
  if (end.info.events.valid && end.info.events.oom_kill > 0) {
    oom_kills_ = end.info.events.oom_kill;
    cells_.note_oom();
  }
  drain_output();
  if (box_.name) box_.name->release();
  if (cells_.state() == KernelState::starting) {
    if (!start_error_)  // else it is the reason the box was killed
      start_error_ = Error(ErrorKind::setup, 0,
                           "the " + std::string(lang_name(cfg_.lang)) +
                               " interpreter exited before it was ready (exit code " + std::to_string(code) + ")");
    (void)cells_.died("the kernel did not start", false, now_ns());
    return;
  }
  std::string reason = "the kernel's interpreter exited (code " + std::to_string(code) + ")";
  if (oom_kills_ > 0)
    reason = "the kernel ran out of memory (oom_kill " + std::to_string(oom_kills_) + " in memory.events)";
  apply(cells_.died(std::move(reason), oom_kills_ > 0, now_ns()));
  watch_.reset();
  driver_pid_ = 0;
}

void Supervisor::kill_box() {
  if (box_alive_ && box_.session) (void)box_.box().signal(SIGKILL);
}

}  // namespace kern::kernel
