// The warm kernel's supervisor loop; see kernel_supervisor.h. Supervisor process only.
//
// One thread, one poll loop. The hot path of a cell is: a request line arrives -> one write of
// the cell frame to the driver -> the driver's end packet wakes the loop -> the output pipes are
// drained to EAGAIN -> one answer line is written. No timers, sleeps or processes per cell.
#include "runtime/kernel_supervisor_loop.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "runtime/kernel_repl.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/proc_stat.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

uint64_t now_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void arm_timer(int tfd, uint64_t ns) {
  struct itimerspec its;
  std::memset(&its, 0, sizeof its);
  if (ns == 0) ns = 1;  // 0 would disarm
  its.it_value.tv_sec = static_cast<time_t>(ns / 1000000000ull);
  its.it_value.tv_nsec = static_cast<long>(ns % 1000000000ull);
  ::timerfd_settime(tfd, 0, &its, nullptr);
}

void disarm_timer(int tfd) {
  struct itimerspec its;
  std::memset(&its, 0, sizeof its);
  ::timerfd_settime(tfd, 0, &its, nullptr);
}

constexpr size_t kKeptResults = 32;
constexpr uint64_t kKeptBytes = 256ull << 20;
constexpr uint64_t kResendIntervalNs = 200000000ull;  // SIGINT again while a deadline's grace runs

}  // namespace

Supervisor::Supervisor(const BoxSpec& spec, const KernelConfig& cfg, Hooks hooks)
    : spec_(spec), cfg_(cfg), hooks_(std::move(hooks)), out_(cfg.output_limit), err_(cfg.output_limit) {
  io_buf_.resize(1 << 16);
}

Supervisor::~Supervisor() = default;

Result<int> Supervisor::run() {
  KERN_TRY_ASSIGN(box_, launch_kernel_box(spec_, cfg_.lang == Lang::repl));
  launcher_alive_ = true;
  start_ns_ = now_ns();
  started_unix_ = static_cast<int64_t>(::time(nullptr));
  timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  repl_timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!timer_ || !repl_timer_) return fail_errno("timerfd_create");
  arm_timer(timer_.get(), static_cast<uint64_t>(cfg_.ready_timeout_ms) * 1000000ull);
  if (cfg_.lang == Lang::repl) {
    auto r = ReplWatch::create(cfg_.prompt);
    if (!r) {
      kill_box();
      return fail(std::move(r).error());
    }
    repl_ = std::move(*r);
  }

  std::vector<struct pollfd> p;
  p.reserve(16);
  while (!(exit_requested_ && !launcher_alive_)) {
    p.clear();
    auto add = [&](int fd, short ev) {
      p.push_back({fd, ev, 0});
      return p.size() - 1;
    };
    size_t i_launch = launcher_alive_ ? add(box_.launcher_pidfd.get(), POLLIN) : SIZE_MAX;
    size_t i_end = add(box_.end_r.get(), POLLIN);
    size_t i_out = box_.out_r ? add(box_.out_r.get(), POLLIN) : SIZE_MAX;
    size_t i_err = box_.err_r ? add(box_.err_r.get(), POLLIN) : SIZE_MAX;
    size_t i_timer = add(timer_.get(), POLLIN);
    size_t i_repl = add(repl_timer_.get(), POLLIN);
    size_t i_started = box_.started_r ? add(box_.started_r.get(), POLLIN) : SIZE_MAX;
    size_t i_report = box_.report_r ? add(box_.report_r.get(), POLLIN) : SIZE_MAX;
    size_t i_sig = hooks_.signal_fd >= 0 ? add(hooks_.signal_fd, POLLIN) : SIZE_MAX;
    size_t i_in = SIZE_MAX;
    if (!pending_in_.empty()) i_in = add(input_fd(), POLLOUT);
    size_t i_listen = SIZE_MAX;
    if (state_ != State::starting && hooks_.listen_fd >= 0 && !exit_requested_)
      i_listen = add(hooks_.listen_fd, POLLIN);
    size_t first_conn = p.size();
    if (state_ != State::starting)
      for (auto& c : conns_) add(c.closed_in ? -1 : c.in, POLLIN);
    // serve's stdout: POLLERR once its reader is gone (the SDK died): the kernel ends with it.
    size_t i_out_gone = SIZE_MAX;
    for (auto& c : conns_)
      if (c.stream && !c.broken_out) i_out_gone = add(c.out, 0);

    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll");
    }
    auto ready = [&](size_t i, short ev = POLLIN | POLLHUP | POLLERR) {
      return i != SIZE_MAX && (p[i].revents & ev);
    };
    // The pipes come after the end socket in the poll set, and poll looks at its fds in order:
    // when an end packet is seen, output written before it was sent is seen too. So a pipe
    // poll did not report, or that was read to EAGAIN here, holds nothing of the ending cell.
    out_drained_ = !ready(i_out);
    err_drained_ = !ready(i_err);
    if (!out_drained_) read_output(box_.out_r, false);
    if (!err_drained_) read_output(box_.err_r, true);
    if (ready(i_end)) read_end_packets();
    if (ready(i_started)) read_started();
    if (ready(i_report)) read_report();
    if (ready(i_in, POLLOUT | POLLERR | POLLHUP)) write_pending_input();
    if (ready(i_timer)) on_timer();
    if (ready(i_repl)) on_repl_timer();
    if (ready(i_sig)) {
      struct signalfd_siginfo si;
      (void)!::read(hooks_.signal_fd, &si, sizeof si);
      request_exit();
      if (state_ == State::starting)
        start_error_ = Error(ErrorKind::setup, EINTR, "interrupted while the kernel was starting");
    }
    if (ready(i_launch)) on_launcher_exit();
    if (start_error_) {
      kill_box();  // and wait for the launcher, so that it tears the box down before we return
      if (!launcher_alive_) return fail(std::move(*start_error_));
      continue;
    }
    if (ready(i_listen)) accept_client();
    if (ready(i_out_gone, POLLERR | POLLHUP))
      for (auto& c : conns_)
        if (c.stream) c.broken_out = true;
    size_t k = first_conn;
    for (auto& c : conns_) {
      if (k < p.size() && (p[k].revents & (POLLIN | POLLHUP | POLLERR))) read_client(c);
      ++k;
    }
    flush_answers();
  }
  flush_answers();
  return 0;
}

int Supervisor::input_fd() const {
  return cfg_.lang == Lang::repl ? box_.in_w.get() : box_.cell_w.get();
}

// ---- the box side ------------------------------------------------------------------------

void Supervisor::read_output(UniqueFd& fd, bool is_err) {
  for (int rounds = 0; rounds < 64; ++rounds) {
    ssize_t n = ::read(fd.get(), io_buf_.data(), io_buf_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      (is_err ? err_drained_ : out_drained_) = true;  // EAGAIN: drained
      return;
    }
    if (n == 0) {
      fd.reset();
      (is_err ? err_drained_ : out_drained_) = true;
      return;
    }
    size_t len = static_cast<size_t>(n);
    if (state_ == State::running) {
      (is_err ? err_ : out_).append(io_buf_.data(), len);
      if (repl_) repl_->saw_output();
    } else if (state_ == State::starting && is_err && cfg_.lang != Lang::repl) {
      // Before the kernel is ready its stderr is kern's own start-up lines and the
      // interpreter's start-up errors: they belong to whoever started it. (A REPL's banner
      // and first prompt are nobody's.)
      (void)sys::write_all_raw(hooks_.diag_fd, io_buf_.data(), len);
    }
    // Between cells: output from processes a cell left behind belongs to no cell; dropped.
  }
}

void Supervisor::drain_output() {
  if (box_.out_r && !out_drained_) read_output(box_.out_r, false);
  if (box_.err_r && !err_drained_) read_output(box_.err_r, true);
}

void Supervisor::read_end_packets() {
  // One packet per wakeup: poll reports the socket again while more are queued.
  struct msghdr mh;
  std::memset(&mh, 0, sizeof mh);
  struct iovec iov = {io_buf_.data(), io_buf_.size()};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(struct ucred))];
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  ssize_t n = ::recvmsg(box_.end_r.get(), &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n <= 0) return;
  pid_t sender = 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
      struct ucred cr;
      std::memcpy(&cr, CMSG_DATA(c), sizeof cr);
      sender = cr.pid;
    }
  }
  on_packet(sender, io_buf_.data(), static_cast<size_t>(n), (mh.msg_flags & MSG_TRUNC) != 0);
}

void Supervisor::on_packet(pid_t sender, const char* data, size_t len, bool cut) {
  if (state_ == State::starting && driver_pid_ == 0) {
    // The first message comes before any cell ran: its sender is the driver, provided it is
    // box init's child. Kept until init is known (the started bytes may come after it).
    if (cut) return;
    early_sender_ = sender;
    early_packet_.assign(data, len);
    try_ready();
    return;
  }
  if (sender == 0 || sender != driver_pid_ || cut) {
    ++forged_;  // a process the cell forked, or garbage: never part of any cell's framing
    return;
  }
  switch (assembler_.feed(data, len)) {
    case PacketAssembler::Feed::partial: return;
    case PacketAssembler::Feed::bad: ++forged_; return;
    case PacketAssembler::Feed::complete: break;
  }
  if (state_ != State::running) {
    ++forged_;
    return;
  }
  auto done = parse_driver_done(assembler_.message(), cell_.nonce);
  if (!done) {
    ++forged_;  // not this cell's nonce: a replay or a forgery, ignored
    return;
  }
  finish_cell(cell_.timed_out ? CellStatus::timeout : CellStatus::done, done->rc,
              std::move(done->results), cell_.timed_out ? deadline_message(false) : std::string(), false);
}

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
    arm_timer(repl_timer_.get(), 1000000ull);
  }
  try_ready();
}

void Supervisor::try_ready() {
  if (state_ != State::starting || init_pid_ == 0) return;
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
  state_ = State::idle;
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
  if (state_ == State::starting) {
    auto e = read_launcher_error(box_.fail_r.get());
    if (e) {
      start_error_ = std::move(*e);
    } else {
      start_error_ = Error(ErrorKind::setup, 0,
                           "the " + std::string(lang_name(cfg_.lang)) +
                               " interpreter exited before it was ready (exit code " +
                               std::to_string(code) + ")");
    }
    state_ = State::dead;
    return;
  }
  if (dead_reason_.empty()) {
    dead_reason_ = "the kernel's interpreter exited (code " + std::to_string(code) + ")";
    if (oom_kills_ > 0) dead_reason_ = "the kernel ran out of memory (oom_kill " + std::to_string(oom_kills_) + " in memory.events)";
  }
  if (state_ == State::running)
    finish_cell(CellStatus::dead, std::nullopt, json::array(), dead_reason_, true);
  state_ = State::dead;
  init_pidfd_.reset();
  driver_pid_ = 0;
}

void Supervisor::kill_box() {
  if (!launcher_alive_) return;
  if (init_pidfd_) ::syscall(SYS_pidfd_send_signal, init_pidfd_.get(), SIGKILL, nullptr, 0);
  else ::kill(box_.launcher_pid, SIGKILL);  // init dies with it (PR_SET_PDEATHSIG)
}

void Supervisor::interrupt() {
  // The whole process group: the interpreter and the foreground commands of the cell, as Ctrl-C.
  if (driver_pid_ > 0 && state_ != State::dead) ::kill(-driver_pid_, SIGINT);
}

void Supervisor::on_timer() {
  uint64_t ticks;
  (void)!::read(timer_.get(), &ticks, sizeof ticks);
  if (state_ == State::starting) {
    start_error_ = Error(ErrorKind::setup, ETIMEDOUT,
                         "the " + std::string(lang_name(cfg_.lang)) + " interpreter did not become ready within " +
                             std::to_string(cfg_.ready_timeout_ms / 1000) + " s");
    kill_box();
    return;
  }
  if (state_ != State::running) return;
  uint64_t now = now_ns();
  out_drained_ = err_drained_ = false;
  if (!cell_.timed_out) {
    cell_.timed_out = true;
    cell_.grace_end_ns = now + static_cast<uint64_t>(cfg_.grace_ms) * 1000000ull;
    interrupt();
  } else if (now >= cell_.grace_end_ns) {
    dead_reason_ = "cell " + cell_.id + " ran past its deadline and ignored SIGINT for " +
                   std::to_string(cfg_.grace_ms) + " ms; the kernel was torn down";
    kill_box();
    finish_cell(CellStatus::timeout, std::nullopt, json::array(), deadline_message(true), true);
    state_ = State::dead;
    return;
  } else {
    interrupt();
  }
  uint64_t left = cell_.grace_end_ns > now ? cell_.grace_end_ns - now : 1;
  arm_timer(timer_.get(), left < kResendIntervalNs ? left : kResendIntervalNs);
}

std::string Supervisor::deadline_message(bool torn_down) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", cell_.timeout_s);
  if (torn_down)
    return std::string("the cell passed its deadline of ") + buf + " s and was still running " +
           std::to_string(cfg_.grace_ms) + " ms after SIGINT: the kernel was torn down and its state is lost";
  return std::string("the cell passed its deadline of ") + buf + " s and was interrupted (SIGINT); the state is kept";
}

void Supervisor::on_repl_timer() {
  uint64_t ticks;
  (void)!::read(repl_timer_.get(), &ticks, sizeof ticks);
  if (!repl_ || (state_ != State::starting && state_ != State::running)) return;
  if (driver_pid_ == 0) return;
  if (state_ == State::starting && init_pid_ == 0) return;
  out_drained_ = err_drained_ = false;
  drain_output();
  bool idle = pending_in_.empty() && repl_->idle(state_ == State::running ? &out_.data() : nullptr,
                                                  state_ == State::running ? &err_.data() : nullptr);
  if (idle) {
    if (state_ == State::starting) {
      // The banner and first prompt belong to no cell.
      become_ready();
    } else {
      // The drain above ran before the REPL was seen waiting: what it wrote in between (all of a
      // quick cell's output) is in the pipes now and must be read before the cell ends.
      out_drained_ = err_drained_ = false;
      drain_output();
      repl_->strip_prompt(out_.data(), err_.data());
      finish_cell(cell_.timed_out ? CellStatus::timeout : CellStatus::done, std::nullopt, json::array(),
                  cell_.timed_out ? deadline_message(false) : std::string(), false);
    }
    return;
  }
  arm_timer(repl_timer_.get(), repl_->next_check_ns());
}

// ---- cells ---------------------------------------------------------------------------------

void Supervisor::write_pending_input() {
  while (!pending_in_.empty()) {
    ssize_t n = ::write(input_fd(), pending_in_.data() + pending_off_, pending_in_.size() - pending_off_);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      pending_in_.clear();  // the interpreter is gone; its exit is reported by the launcher
      pending_off_ = 0;
      return;
    }
    pending_off_ += static_cast<size_t>(n);
    if (pending_off_ == pending_in_.size()) {
      pending_in_.clear();
      pending_off_ = 0;
      if (repl_ && state_ == State::running) {
        repl_->cell_written();
        arm_timer(repl_timer_.get(), repl_->next_check_ns());
      }
    }
  }
}

Supervisor::StartOutcome Supervisor::start_cell(const Request& req) {
  if (state_ == State::dead) return StartOutcome::dead;
  if (state_ == State::running) return StartOutcome::busy;
  // Output that arrived between cells was read and dropped by the loop before this request
  // was read (the pipes are served first in each round).
  out_.clear();
  err_.clear();
  cell_ = Cell{};
  cell_.id = "c" + std::to_string(++cells_);
  cell_.nonce = make_nonce();
  cell_.start_ns = now_ns();
  cell_.req_id = req.id;
  cell_.timeout_s = req.timeout_s.value_or(0);
  state_ = State::running;
  if (cfg_.lang == Lang::repl) {
    pending_in_ = req.code;
    if (pending_in_.empty() || pending_in_.back() != '\n') pending_in_ += '\n';
    repl_->cell_started();
  } else {
    pending_in_ = driver_frame(cell_.nonce, cell_.id, req.code);
  }
  pending_off_ = 0;
  write_pending_input();
  if (req.timeout_s) arm_timer(timer_.get(), static_cast<uint64_t>(*req.timeout_s * 1e9));
  return StartOutcome::started;
}

void Supervisor::finish_cell(CellStatus status, std::optional<int> rc, json results, std::string error,
                             bool state_lost) {
  drain_output();
  if (cell_.timeout_s > 0) disarm_timer(timer_.get());
  CellResult r;
  r.cell_id = cell_.id;
  r.status = status;
  r.rc = rc;
  r.results = std::move(results);
  r.duration_ms = static_cast<double>(now_ns() - cell_.start_ns) / 1e6;
  r.truncated = out_.truncated() || err_.truncated();
  r.error = std::move(error);
  r.state_lost = state_lost;
  r.oom = oom_kills_ > 0 && state_lost;
  r.out.swap(out_.data());
  r.err.swap(err_.data());
  out_.clear();
  err_.clear();
  if (cell_.waiter) {
    cell_.waiter->line = result_line(r, cell_.req_id);
    cell_.waiter->ready = true;
  }
  results_.push_back(std::move(r));
  // Kept for poll: the last few cells, and never more than kKeptBytes of their output.
  uint64_t bytes = 0;
  for (const auto& k : results_) bytes += k.out.size() + k.err.size();
  while (results_.size() > 1 && (results_.size() > kKeptResults || bytes > kKeptBytes)) {
    bytes -= results_.front().out.size() + results_.front().err.size();
    results_.pop_front();
  }
  pending_in_.clear();
  pending_off_ = 0;
  if (state_ == State::running) state_ = State::idle;
}

}  // namespace kern::kernel
