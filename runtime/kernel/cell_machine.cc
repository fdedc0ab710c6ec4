// The cell state machine; see cell_machine.h. Pure: no I/O, the clock is passed in.
#include "runtime/kernel/cell_machine.h"

#include <cstdio>

namespace kern::kernel {
namespace {

constexpr size_t kKeptResults = 32;
constexpr uint64_t kKeptBytes = 256ull << 20;
constexpr uint64_t kResendIntervalNs = 200000000ull;  // SIGINT again while a deadline's grace runs

}  // namespace

std::string_view state_name(KernelState s) {
  switch (s) {
    case KernelState::starting: return "starting";
    case KernelState::idle: return "idle";
    case KernelState::running: return "running";
    case KernelState::interrupting: return "interrupting";
    case KernelState::dead: return "dead";
  }
  return "dead";
}

CellMachine::CellMachine(CellMachineConfig cfg) : cfg_(cfg), out_(cfg.output_limit), err_(cfg.output_limit) {}

void CellMachine::ready() {
  if (state_ == KernelState::starting) state_ = KernelState::idle;
}

Actions CellMachine::submit(std::string_view code, std::optional<double> timeout_s, std::string nonce,
                            uint64_t now_ns) {
  Actions a;
  if (state_ != KernelState::idle) {
    CellResult r;
    if (state_ == KernelState::dead) {
      r.status = CellStatus::dead;
      r.error = dead_reason_.empty() ? "the kernel is dead" : dead_reason_;
      r.error += "; stop it and start a new one";
      r.state_lost = true;
      r.oom = oom_;  // every answer of a kernel the OOM killer ended says so
    } else {
      r.status = CellStatus::busy;
      r.error = running() ? "cell " + cell_.id + " is running; one cell at a time" : "the kernel is starting";
    }
    a.refused = std::move(r);
    return a;
  }
  // Output that arrived between cells was dropped by output(); the buffers are empty.
  out_.clear();
  err_.clear();
  cell_ = Cell{};
  cell_.id = "c" + std::to_string(++cells_);
  cell_.nonce = std::move(nonce);
  cell_.start_ns = now_ns;
  cell_.timeout_s = timeout_s.value_or(0);
  state_ = KernelState::running;
  if (cfg_.repl) {
    a.write.assign(code);
    if (a.write.empty() || a.write.back() != '\n') a.write += '\n';
  } else {
    a.write = driver_frame(cell_.nonce, cell_.id, code);
  }
  if (timeout_s) a.arm_ns = static_cast<uint64_t>(*timeout_s * 1e9);
  return a;
}

void CellMachine::output(bool is_err, const char* data, size_t len) {
  // Between cells: output from processes a cell left behind belongs to no cell; dropped.
  if (running()) (is_err ? err_ : out_).append(data, len);
}

Actions CellMachine::end_message(std::string_view message, DriverView view, uint64_t now_ns) {
  Actions a;
  if (!running() || cfg_.repl) {
    ++refused_;
    return a;
  }
  auto done = parse_driver_done(message, cell_.nonce);
  if (!done) {
    ++refused_;  // not this cell's nonce: a replay or a forgery, ignored
    return a;
  }
  if (!cfg_.confirm_idle) {
    cell_.claims = 1;
    cell_.claim = std::move(*done);
    return end_confirmed(now_ns);
  }
  if (view == DriverView::inside) {
    // The main thread is inside the cell's code: another thread of the interpreter sent this.
    ++refused_;
    ++cell_.unconfirmed;
  } else if (++cell_.claims == 1) {
    cell_.claim = std::move(*done);
  }
  // The cell ends only once the main thread waits for the next cell (driver_seen).
  a.check_driver = true;
  return a;
}

Actions CellMachine::driver_seen(DriverView view, uint64_t now_ns) {
  Actions a;
  if (!running() || !cfg_.confirm_idle || (cell_.claims == 0 && cell_.unconfirmed == 0)) return a;
  if (view != DriverView::waiting) {
    a.check_driver = true;
    return a;
  }
  return end_confirmed(now_ns);
}

Actions CellMachine::end_confirmed(uint64_t now_ns) {
  Actions a;
  bool late = state_ == KernelState::interrupting;
  if (cell_.claims > 1) {
    refused_ += cell_.claims;
    a.finished = finish(CellStatus::error, std::nullopt, "[]",
                        "the end of cell " + cell_.id + " was claimed " + std::to_string(cell_.claims) +
                            " times from the interpreter's own process (a thread an earlier cell left running?): "
                            "its rc and results are unknown; its output is kept",
                        false, now_ns);
  } else if (cell_.claims == 0) {
    a.finished = finish(CellStatus::error, std::nullopt, "[]",
                        "the interpreter waits for the next cell but its end of cell " + cell_.id +
                            " came while its main thread was still busy: the cell's rc and results are unknown",
                        false, now_ns);
  } else {
    a.finished = finish(late ? CellStatus::timeout : CellStatus::done, cell_.claim->rc,
                        std::move(cell_.claim->results), late ? deadline_message(false) : std::string(), false,
                        now_ns);
  }
  a.disarm = cell_.timeout_s > 0;
  return a;
}

Actions CellMachine::repl_idle(uint64_t now_ns) {
  Actions a;
  if (!running() || !cfg_.repl) return a;
  bool late = state_ == KernelState::interrupting;
  a.disarm = cell_.timeout_s > 0;
  a.finished = finish(late ? CellStatus::timeout : CellStatus::done, std::nullopt, "[]",
                      late ? deadline_message(false) : std::string(), false, now_ns);
  return a;
}

Actions CellMachine::timer(uint64_t now_ns) {
  Actions a;
  if (state_ == KernelState::running && cell_.timeout_s > 0) {
    state_ = KernelState::interrupting;
    cell_.grace_end_ns = now_ns + static_cast<uint64_t>(cfg_.grace_ms) * 1000000ull;
  } else if (state_ == KernelState::interrupting && now_ns >= cell_.grace_end_ns) {
    dead_reason_ = "cell " + cell_.id + " ran past its deadline and ignored SIGINT for " +
                   std::to_string(cfg_.grace_ms) + " ms; the kernel was torn down";
    a.kill = true;
    a.finished = finish(CellStatus::timeout, std::nullopt, "[]", deadline_message(true), true, now_ns);
    state_ = KernelState::dead;
    return a;
  } else if (state_ != KernelState::interrupting) {
    return a;
  }
  a.interrupt = true;
  uint64_t left = cell_.grace_end_ns > now_ns ? cell_.grace_end_ns - now_ns : 1;
  a.arm_ns = left < kResendIntervalNs ? left : kResendIntervalNs;
  return a;
}

Actions CellMachine::died(std::string reason, bool oom, uint64_t now_ns) {
  Actions a;
  if (dead_reason_.empty()) dead_reason_ = std::move(reason);
  oom_ = oom_ || oom;
  if (running()) {
    a.disarm = cell_.timeout_s > 0;
    a.finished = finish(CellStatus::dead, std::nullopt, "[]", dead_reason_, true, now_ns);
  }
  state_ = KernelState::dead;
  return a;
}

Actions CellMachine::interrupt_request() const {
  Actions a;
  a.interrupt = running();
  return a;
}

Actions CellMachine::stop() {
  Actions a;
  a.kill = true;
  return a;
}

const CellResult* CellMachine::result(std::string_view id) const {
  for (auto it = results_.rbegin(); it != results_.rend(); ++it)
    if ((*it)->cell_id == id) return it->get();
  return nullptr;
}

std::shared_ptr<const CellResult> CellMachine::share(const CellResult* r) const {
  for (const auto& kept : results_)
    if (kept.get() == r) return kept;
  return nullptr;
}

CellResult* CellMachine::finish(CellStatus status, std::optional<int> rc, std::string results, std::string error,
                                bool state_lost, uint64_t now_ns) {
  CellResult r;
  r.cell_id = cell_.id;
  r.status = status;
  r.rc = rc;
  r.results = std::move(results);
  r.duration_ms = static_cast<double>(now_ns - cell_.start_ns) / 1e6;
  r.truncated = out_.truncated() || err_.truncated();
  r.error = std::move(error);
  r.state_lost = state_lost;
  r.oom = oom_ && state_lost;
  r.out.swap(out_.data());
  r.err.swap(err_.data());
  out_.clear();
  err_.clear();
  kept_bytes_ += r.out.size() + r.err.size();
  results_.push_back(std::make_shared<CellResult>(std::move(r)));
  // Kept for poll: the last few cells, and never more than kKeptBytes of their output.
  while (results_.size() > 1 && (results_.size() > kKeptResults || kept_bytes_ > kKeptBytes)) {
    kept_bytes_ -= results_.front()->out.size() + results_.front()->err.size();
    results_.pop_front();
  }
  if (running()) state_ = KernelState::idle;
  cell_.id.clear();
  return results_.back().get();
}

std::string CellMachine::deadline_message(bool torn_down) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", cell_.timeout_s);
  if (torn_down)
    return std::string("the cell passed its deadline of ") + buf + " s and was still running " +
           std::to_string(cfg_.grace_ms) + " ms after SIGINT: the kernel was torn down and its state is lost";
  return std::string("the cell passed its deadline of ") + buf + " s and was interrupted (SIGINT); the state is kept";
}

}  // namespace kern::kernel
