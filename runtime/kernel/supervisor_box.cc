// The supervisor's box side: the launcher's started bytes, the driver's first message (readiness),
// the report lines, the launcher's exit, the kill. Supervisor process only; see supervisor.h.
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "runtime/kernel/supervisor.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/proc_stat.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

}  // namespace

void Supervisor::read_started() {
  unsigned char b[2];
  ssize_t n = ::read(box_.started_r.get(), b, sizeof b);
  if (n < 0 && errno == EINTR) return;
  if (n == 2) memory_verdict_ = b[1];
  box_.started_r.reset();
  if (n != 2) return;  // the launcher failed; its exit says why
  init_pid_ = find_box_init(cfg_.name, box_.launcher_pid);
  // The launcher registered the box with the driver's argv: `kern ps` shows a kernel instead.
  if (auto rt = paths::runtime_dir(); rt && !spec_.argv.empty())
    (void)label_box_record(*rt, cfg_.name, box_.launcher_pid, "kernel",
                           std::string(lang_name(cfg_.lang)) + " kernel: " + spec_.argv[0]);
  if (init_pid_ > 0) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, init_pid_, 0));
    if (fd >= 0) init_pidfd_.reset(fd);
  }
  if (cfg_.lang == Lang::repl && init_pid_ > 0) {
    driver_pid_ = first_child_of(init_pid_);
    if (repl_) repl_->start(driver_pid_, box_.in_w.get());
    arm_timer(check_timer_.get(), 1000000ull);
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
    ++forged_;
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

void Supervisor::read_report() {
  for (;;) {
    ssize_t n = ::read(box_.report_r.get(), io_buf_.data(), io_buf_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) box_.report_r.reset();
      break;
    }
    report_lines_.feed(io_buf_.data(), static_cast<size_t>(n));
  }
  std::string line;
  while (report_lines_.next(line) == LineReader::Next::line) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j.value("event", "") == "exited") {
      auto it = j.find("oom_kill");
      if (it != j.end() && it->is_number_unsigned()) oom_kills_ = it->get<uint64_t>();
      if (oom_kills_ > 0) cells_.note_oom();
    }
  }
}

void Supervisor::on_launcher_exit() {
  out_drained_ = err_drained_ = false;
  int status = 0;
  pid_t r = ::waitpid(box_.launcher_pid, &status, WNOHANG);
  if (r == 0) return;
  launcher_alive_ = false;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (box_.report_r) read_report();
  drain_output();
  if (cells_.state() == KernelState::starting) {
    auto e = read_launcher_error(box_.fail_r.get());
    if (e) {
      start_error_ = std::move(*e);
    } else {
      start_error_ = Error(ErrorKind::setup, 0,
                           "the " + std::string(lang_name(cfg_.lang)) +
                               " interpreter exited before it was ready (exit code " +
                               std::to_string(code) + ")");
    }
    (void)cells_.died("the kernel did not start", false, now_ns());
    return;
  }
  std::string reason = "the kernel's interpreter exited (code " + std::to_string(code) + ")";
  if (oom_kills_ > 0)
    reason = "the kernel ran out of memory (oom_kill " + std::to_string(oom_kills_) + " in memory.events)";
  apply(cells_.died(std::move(reason), oom_kills_ > 0, now_ns()));
  init_pidfd_.reset();
  watch_.reset();
  driver_pid_ = 0;
}

void Supervisor::kill_box() {
  if (!launcher_alive_) return;
  if (init_pidfd_) ::syscall(SYS_pidfd_send_signal, init_pidfd_.get(), SIGKILL, nullptr, 0);
  else ::kill(box_.launcher_pid, SIGKILL);  // init dies with it (PR_SET_PDEATHSIG)
}

}  // namespace kern::kernel
