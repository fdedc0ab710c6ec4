// The warm kernel's supervisor loop; see supervisor_loop.h and kernel.h. Supervisor process only.
//
// One thread, one event loop (epoll, poll_set.h), doing I/O only: what happens to a cell is decided by the cell state
// machine (cell_machine.h), fed with events here, whose Actions apply() carries out. The hot path
// of a cell is: a request line arrives -> one write of the cell frame to the driver -> the
// driver's end packet wakes the loop -> a look at the driver's main thread (a pread of /proc),
// repeated until it waits for the next cell -> the output pipes are drained to EAGAIN -> one
// answer line is written. No processes per cell.
#include "runtime/kernel/supervisor_loop.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "runtime/kernel/driver_watch.h"
#include "runtime/kernel/poll_set.h"
#include "runtime/kernel/repl.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

// Looking again for a driver on its way to its wait: a few quick looks, then a timer that backs off.
constexpr int kQuickLooks = 16;
constexpr uint64_t kMaxCheckNs = 5000000;    // 5 ms
constexpr int kMaxDrain = 1024;             // end packets read per look

CellMachineConfig machine_config(const KernelConfig& cfg) {
  CellMachineConfig c;
  c.repl = cfg.lang == Lang::repl;
  // The Python and bash drivers wait for their next cell in a blocking read on their main thread.
  // node waits in its event loop, where the timers of earlier cells run too: nothing to confirm.
  c.confirm_idle = cfg.lang == Lang::python || cfg.lang == Lang::bash;
  c.grace_ms = cfg.grace_ms;
  c.output_limit = cfg.output_limit;
  return c;
}

}  // namespace

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

Supervisor::Supervisor(const BoxSpec& spec, const KernelConfig& cfg, Hooks hooks)
    : spec_(spec), cfg_(cfg), hooks_(std::move(hooks)), cells_(machine_config(cfg)) {
  io_buf_.resize(1 << 16);
}

Supervisor::~Supervisor() = default;

Result<int> Supervisor::run() {
  std::string label = std::string(lang_name(cfg_.lang)) + " kernel: " + (spec_.argv.empty() ? "" : spec_.argv[0]);
  start_ns_ = now_ns();
  KERN_TRY_ASSIGN(box_, launch_kernel_box(spec_, cfg_.lang == Lang::repl, label));
  box_alive_ = true;
  started_unix_ = static_cast<int64_t>(::time(nullptr));
  // The supervisor's wake-ups no longer preempt the process that woke it: the driver that sends
  // the end of a cell runs on into its wait for the next cell (what the supervisor looks for)
  // instead of being preempted half way and yielded back to, and a client that sent a request
  // runs on into its read of the answer. Two context switches fewer per cell on a shared CPU.
  // Reset on fork: nothing the supervisor starts inherits it (the box is started already).
  struct sched_param sp = {};
  (void)::sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp);
  timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  check_timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!timer_ || !check_timer_) return fail_errno("timerfd_create");
  arm_timer(timer_.get(), static_cast<uint64_t>(cfg_.ready_timeout_ms) * 1000000ull);
  if (cfg_.lang == Lang::repl) {
    auto r = ReplWatch::create(cfg_.prompt);
    if (!r) {
      kill_box();
      return fail(std::move(r).error());
    }
    repl_ = std::move(*r);
  }
  on_box_started();
  watch_box_io();

  // One epoll set for the life of the loop (poll_set.h): a round whose fds did not change costs
  // one epoll_wait, not a poll that visits nine fds twice.
  KERN_TRY_ASSIGN(PollSet p, PollSet::create());
  enum : uint64_t { kBox = 1, kEnd, kOut, kErr, kTimer, kCheck, kSig, kIn, kListen };
  while (!(exit_requested_ && !box_alive_)) {
    p.clear();
    size_t i_box = box_alive_ ? p.add(kBox, box_.box().pidfd(), POLLIN) : SIZE_MAX;
    size_t i_end = p.add(kEnd, end_hup_ ? -1 : box_.end_r.get(), POLLIN);
    size_t i_out = box_.out_r ? p.add(kOut, box_.out_r.get(), POLLIN) : SIZE_MAX;
    size_t i_err = box_.err_r ? p.add(kErr, box_.err_r.get(), POLLIN) : SIZE_MAX;
    size_t i_timer = p.add(kTimer, timer_.get(), POLLIN);
    size_t i_check = p.add(kCheck, check_timer_.get(), POLLIN);
    size_t i_sig = hooks_.signal_fd >= 0 ? p.add(kSig, hooks_.signal_fd, POLLIN) : SIZE_MAX;
    size_t i_in = SIZE_MAX;
    if (!pending_in_.empty()) i_in = p.add(kIn, input_fd(), POLLOUT);
    size_t i_listen = SIZE_MAX;
    bool started = cells_.state() != KernelState::starting;
    if (started && hooks_.listen_fd >= 0 && !exit_requested_) i_listen = p.add(kListen, hooks_.listen_fd, POLLIN);
    size_t first_conn = p.size();
    if (started)
      for (auto& c : conns_) p.add(c.serial << 1, c.closed_in ? -1 : c.in, POLLIN);
    // serve's stdout: POLLERR once its reader is gone (the SDK died): the kernel ends with it.
    size_t i_out_gone = SIZE_MAX;
    for (auto& c : conns_)
      if (c.stream && !c.broken_out) i_out_gone = p.add((c.serial << 1) | 1, c.out, 0);

    if (p.wait(-1) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("epoll_wait");
    }
    fresh_view_.reset();  // a look from an earlier round is stale
      auto ready = [&](size_t i, short ev = POLLIN | POLLHUP | POLLERR) {
      return i != SIZE_MAX && (p.revents(i) & ev);
    };
    // Output written before an end packet was sent is reported with it: the write's wake-up put
    // the pipe on the epoll set's ready list before the packet's did, and epoll_wait looks at
    // every item on that list. So a pipe not reported, or read to EAGAIN here, holds nothing of
    // the ending cell.
    out_drained_ = !ready(i_out);
    err_drained_ = !ready(i_err);
    if (!out_drained_) read_output(box_.out_r, false);
    if (!err_drained_) read_output(box_.err_r, true);
    if (ready(i_end) && !read_end_packet() && (p.revents(i_end) & POLLHUP)) end_hup_ = true;
    if (ready(i_in, POLLOUT | POLLERR | POLLHUP)) write_pending_input();
    if (ready(i_timer)) on_timer();
    if (ready(i_check)) on_check_timer();
    if (ready(i_sig)) {
      struct signalfd_siginfo si;
      (void)!::read(hooks_.signal_fd, &si, sizeof si);
      request_exit();
      if (cells_.state() == KernelState::starting)
        start_error_ = Error(ErrorKind::setup, EINTR, "interrupted while the kernel was starting");
    }
    if (ready(i_box)) on_box_exit();
    if (start_error_) {
      kill_box();  // and wait for box init's exit, so that the box is torn down before we return
      if (!box_alive_) return fail(std::move(*start_error_));
      continue;
    }
    if (ready(i_listen)) accept_client();
    if (ready(i_out_gone, POLLERR | POLLHUP))
      for (auto& c : conns_)
        if (c.stream) c.broken_out = true;
    size_t k = first_conn;
    for (auto& c : conns_) {
      if (k < p.size() && (p.revents(k) & (POLLIN | POLLHUP | POLLERR))) read_client(c);
      ++k;
    }
    if (check_wanted_) confirm_end(kQuickLooks);
    flush_answers();
  }
  flush_answers();
  return 0;
}

int Supervisor::input_fd() const {
  return cfg_.lang == Lang::repl ? box_.in_w.get() : box_.cell_w.get();
}

// ---- the driver's output and its ends of cells ----------------------------------------------

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
    if (cells_.running()) {
      cells_.output(is_err, io_buf_.data(), len);
      if (repl_) repl_->saw_output();
    } else if (cells_.state() == KernelState::starting && is_err && cfg_.lang != Lang::repl) {
      // Before the kernel is ready its stderr is kern's own start-up lines and the
      // interpreter's start-up errors: they belong to whoever started it. (A REPL's banner
      // and first prompt are nobody's.)
      (void)sys::write_all_raw(hooks_.diag_fd, io_buf_.data(), len);
    }
    // Between cells: output from processes a cell left behind belongs to no cell; dropped.
  }
}

void Supervisor::watch_box_io() {
  drain_ep_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!drain_ep_) return;  // queued_box_io() then says "all", and everything is read
  auto watch = [&](const UniqueFd& fd, unsigned bit) {
    struct epoll_event ev = {};
    ev.events = EPOLLIN;
    ev.data.u32 = bit;
    if (fd && ::epoll_ctl(drain_ep_.get(), EPOLL_CTL_ADD, fd.get(), &ev) != 0) drain_ep_.reset();
  };
  watch(box_.end_r, kQueuedEnd);
  watch(box_.out_r, kQueuedOut);
  watch(box_.err_r, kQueuedErr);
}

unsigned Supervisor::queued_box_io() {
  constexpr unsigned all = kQueuedEnd | kQueuedOut | kQueuedErr;
  if (!drain_ep_) return all;
  // A pipe closed at its EOF left the set with its last reference; its bit never comes back.
  struct epoll_event evs[3];
  int n = ::epoll_wait(drain_ep_.get(), evs, 3, 0);
  if (n < 0) return all;
  unsigned q = 0;
  for (int i = 0; i < n; ++i) q |= evs[i].data.u32;
  return q;
}

void Supervisor::drain_output() {
  if (box_.out_r && !out_drained_) read_output(box_.out_r, false);
  if (box_.err_r && !err_drained_) read_output(box_.err_r, true);
}

bool Supervisor::read_end_packet() {
  // One packet per call: poll reports the socket again while more are queued.
  struct msghdr mh;
  std::memset(&mh, 0, sizeof mh);
  struct iovec iov = {io_buf_.data(), io_buf_.size()};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(struct ucred))];
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  ssize_t n = ::recvmsg(box_.end_r.get(), &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n <= 0) return false;
  pid_t sender = 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
      struct ucred cr;
      std::memcpy(&cr, CMSG_DATA(c), sizeof cr);
      sender = cr.pid;
    }
  }
  on_packet(sender, io_buf_.data(), static_cast<size_t>(n), (mh.msg_flags & MSG_TRUNC) != 0);
  return true;
}

void Supervisor::on_packet(pid_t sender, const char* data, size_t len, bool cut) {
  if (cells_.state() == KernelState::starting && driver_pid_ == 0) {
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
  // How the driver's main thread looks now, after the message was sent: inside the cell means
  // another thread sent it.
  DriverView view = DriverView::between;
  if (cells_.confirm_idle() && cells_.running()) fresh_view_ = view = look_at_driver();
  drain_output();
  apply(cells_.end_message(assembler_.message(), view, now_ns()));
}

DriverView Supervisor::look_at_driver() {
  if (!watch_) return DriverView::between;
  // No count of the bytes left in the cell pipe (it was an ioctl a cell): once the whole frame is
  // written, the only time the driver's main thread reads that pipe with bytes still in it is
  // while it takes in the frame, before it has read the frame's last bytes, the nonce; and every
  // look that decides anything comes after a message carrying that nonce (cell_machine.h: no
  // claim, no decision). Code of the cell itself can always sit in a read of fd 3 and look
  // waiting, with or without a count; the look is there for threads left behind.
  return watch_->look(pending_in_.empty());
}

void Supervisor::confirm_end(int looks) {
  // The cell may end once the driver's main thread waits for the next cell; every message it
  // sent before that look is read before the machine decides (a thread's forgery among them
  // makes the result unknown, never taken).
  for (int i = 0; i < looks; ++i) {
    check_wanted_ = false;
    // The first look may be the one the end packet's arrival took in this round (on_packet):
    // taken after that packet was read, it is as fresh as a new one and costs no read of /proc.
    DriverView view = fresh_view_ ? *fresh_view_ : look_at_driver();
    fresh_view_.reset();
    // What is queued now, after the look, in one epoll_wait instead of a recvmsg and two reads
    // that would say EAGAIN: every write and send completed before the look has put its fd on
    // the ready list (the driver's main thread is past them; another thread's message still in
    // flight was sent after the driver's own end, and taking it or not changes nothing).
    unsigned queued = queued_box_io();
    // Bounded, so that a process flooding the socket cannot hold the loop: with packets still
    // queued nothing is decided, and the next look comes later.
    int drained = 0;
    if (queued & kQueuedEnd)
      while (drained < kMaxDrain && read_end_packet()) ++drained;
    if (drained == kMaxDrain) {
      check_wanted_ = true;
      break;
    }
    out_drained_ = !(queued & kQueuedOut);
    err_drained_ = !(queued & kQueuedErr);
    drain_output();
    apply(cells_.driver_seen(view, now_ns()));
    if (!check_wanted_) {
      check_backoff_ns_ = kFirstCheckNs;
      return;
    }
    if (i + 1 < looks) ::sched_yield();
  }
  check_wanted_ = false;
  arm_check(check_backoff_ns_);
  check_backoff_ns_ = check_backoff_ns_ * 2 > kMaxCheckNs ? kMaxCheckNs : check_backoff_ns_ * 2;
}

void Supervisor::arm_check(uint64_t ns) {
  arm_timer(check_timer_.get(), ns);
  check_armed_ = true;
}

void Supervisor::on_check_timer() {
  uint64_t ticks;
  (void)!::read(check_timer_.get(), &ticks, sizeof ticks);
  check_armed_ = false;  // one-shot: it fired
  if (repl_) {
    on_repl_timer();
    return;
  }
  if (cells_.running()) confirm_end(1);
}

void Supervisor::apply(Actions a) {
  if (a.disarm) disarm_timer(timer_.get());
  if (a.arm_ns) arm_timer(timer_.get(), *a.arm_ns);
  if (a.interrupt) interrupt();
  if (a.kill) kill_box();
  if (a.check_driver) check_wanted_ = true;
  if (!a.write.empty()) {
    pending_in_ = std::move(a.write);
    pending_off_ = 0;
    write_pending_input();
  }
  if (a.finished) {
    if (waiter_) {
      waiter_->result = cells_.share(a.finished);
      if (!waiter_->result) waiter_->line = result_line(*a.finished, req_id_);
      waiter_->id = req_id_;
      waiter_->ready = true;
    }
    waiter_ = nullptr;
    pending_in_.clear();
    pending_off_ = 0;
    if (check_armed_) disarm_timer(check_timer_.get());  // a quick cell never armed it
    check_armed_ = false;
  }
}

void Supervisor::interrupt() {
  // The whole process group: the interpreter and the foreground commands of the cell, as Ctrl-C.
  if (driver_pid_ > 0 && cells_.state() != KernelState::dead) ::kill(-driver_pid_, SIGINT);
}

void Supervisor::on_timer() {
  uint64_t ticks;
  (void)!::read(timer_.get(), &ticks, sizeof ticks);
  if (cells_.state() == KernelState::starting) {
    start_error_ = Error(ErrorKind::setup, ETIMEDOUT,
                         "the " + std::string(lang_name(cfg_.lang)) + " interpreter did not become ready within " +
                             std::to_string(cfg_.ready_timeout_ms / 1000) + " s");
    kill_box();
    return;
  }
  out_drained_ = err_drained_ = false;
  drain_output();
  apply(cells_.timer(now_ns()));
}

void Supervisor::on_repl_timer() {
  bool starting = cells_.state() == KernelState::starting;
  if (!repl_ || (!starting && !cells_.running())) return;
  if (driver_pid_ == 0) return;
  if (starting && init_pid_ == 0) return;
  out_drained_ = err_drained_ = false;
  drain_output();
  bool running = cells_.running();
  bool idle = pending_in_.empty() && repl_->idle(running ? &cells_.cell_out() : nullptr,
                                                  running ? &cells_.cell_err() : nullptr);
  if (idle) {
    if (starting) {
      // The banner and first prompt belong to no cell.
      become_ready();
    } else {
      // The drain above ran before the REPL was seen waiting: what it wrote in between (all of a
      // quick cell's output) is in the pipes now and must be read before the cell ends.
      out_drained_ = err_drained_ = false;
      drain_output();
      repl_->strip_prompt(cells_.cell_out(), cells_.cell_err());
      apply(cells_.repl_idle(now_ns()));
    }
    return;
  }
  arm_check(repl_->next_check_ns());
}

// ---- cells ---------------------------------------------------------------------------------

void Supervisor::write_pending_input() {
  while (!pending_in_.empty()) {
    ssize_t n = ::write(input_fd(), pending_in_.data() + pending_off_, pending_in_.size() - pending_off_);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      pending_in_.clear();  // the interpreter is gone; its exit is seen on box init's pidfd
      pending_off_ = 0;
      return;
    }
    pending_off_ += static_cast<size_t>(n);
    if (pending_off_ == pending_in_.size()) {
      pending_in_.clear();
      pending_off_ = 0;
      if (repl_ && cells_.running()) {
        repl_->cell_written();
        arm_check(repl_->next_check_ns());
      }
    }
  }
}

bool Supervisor::start_cell(Conn& c, const Request& req) {
  // Output that arrived between cells was read and dropped by the loop before this request
  // was read (the pipes are served first in each round).
  std::string nonce;
  if (cfg_.lang != Lang::repl) {
    auto n = make_nonce();
    if (!n) {
      // Without a nonce nobody could tell the driver's end of the cell from a forged one.
      push_answer(c, error_line(n.error().what(), req.id));
      return false;
    }
    nonce = std::move(*n);
  }
  Actions a = cells_.submit(req.code, req.timeout_s, nonce, now_ns());
  if (a.refused) {
    push_answer(c, result_line(*a.refused, req.id));
    return false;
  }
  req_id_ = req.id;
  waiter_ = nullptr;
  check_backoff_ns_ = kFirstCheckNs;
  if (repl_) repl_->cell_started();
  apply(std::move(a));
  return true;
}

}  // namespace kern::kernel
