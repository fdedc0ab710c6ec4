// The warm kernel's cell state machine: pure (no I/O, no clock, no processes), unit-tested in
// tests/unit/runtime_kernel_cells_test.cc. The supervisor loop (supervisor_loop.cc) turns what it
// reads and sees into events, and performs the Actions each event returns. Supervisor process.
//
//   starting --ready--> idle --submit--> running --end / repl idle--> idle
//                                          |  \--deadline--> interrupting --end--> idle (timeout)
//                                          |                     \--grace over--> dead (timeout,
//   any --kernel died / stop--> dead       |                                      state lost)
//
// One cell at a time: a submit while a cell runs is answered busy, in a dead kernel dead.
//
// The end of a cell (drivers that report one, see DriverView): a claim is a complete message
// from the driver's pid carrying the running cell's nonce. With confirm_idle (the Python and bash
// drivers, which read their next cell with a blocking read on their main thread), a claim is
// only a candidate: it is refused when it arrives while the driver's main thread is blocked
// inside the cell (another thread sent it), and the cell ends only once the main thread is seen
// blocked reading the next cell with the whole frame read; if more than one candidate arrived
// by then, the cell's result is unknown and it is answered with status error.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runtime/kernel/protocol.h"

namespace kern::kernel {

enum class KernelState { starting, idle, running, interrupting, dead };
std::string_view state_name(KernelState s);

// What the supervisor saw of the driver's main thread (its /proc/PID/task/PID/syscall, and
// whether the frame is written whole: the driver has then read it whole by the time an end
// carrying the frame's nonce, its last bytes, comes).
enum class DriverView {
  waiting,  // blocked reading the cell pipe, the frame written whole
  between,  // running, or in a send on the end socket, a futex (the GIL) or a page fault:
            // it may be on its way from the cell's end to its wait
  inside,   // blocked in any other call, or reading a cell frame not yet read whole: inside a cell
};

struct CellMachineConfig {
  bool repl = false;          // a REPL kernel: no driver, the end is decided by ReplWatch
  bool confirm_idle = false;  // see the file comment
  unsigned grace_ms = 2000;
  uint64_t output_limit = kDefaultOutputLimit;
};

// What the loop must do after an event; every field is optional.
struct Actions {
  std::string write;               // bytes for the driver's input (the cell frame or REPL input)
  std::optional<uint64_t> arm_ns;  // (re)arm the cell timer to fire in this many ns
  bool disarm = false;             // disarm the cell timer
  bool interrupt = false;          // SIGINT to the driver's process group
  bool kill = false;               // tear the box down
  bool check_driver = false;       // look at the driver's main thread (DriverView) again soon
  const CellResult* finished = nullptr;  // the running cell ended: its kept result (valid until
                                         // the next cell ends)
  std::optional<CellResult> refused;   // the submit was refused (busy, dead)
};

class CellMachine {
 public:
  explicit CellMachine(CellMachineConfig cfg);
  // Before ready: whether ends are confirmed (the supervisor could not watch the driver: no).
  void set_confirm_idle(bool on) { cfg_.confirm_idle = on; }
  bool confirm_idle() const { return cfg_.confirm_idle; }

  KernelState state() const { return state_; }
  bool running() const { return state_ == KernelState::running || state_ == KernelState::interrupting; }
  // The running (or interrupting) cell's id; empty when none.
  const std::string& cell_id() const { return cell_.id; }
  uint64_t cells() const { return cells_; }
  uint64_t refused_claims() const { return refused_; }
  const std::string& dead_reason() const { return dead_reason_; }
  // The running cell's output so far (REPL prompt detection reads it).
  std::string& cell_out() { return out_.data(); }
  std::string& cell_err() { return err_.data(); }

  // starting -> idle.
  void ready();
  // A run or fire request. `nonce` is fresh for this cell; `now_ns` a monotonic clock.
  Actions submit(std::string_view code, std::optional<double> timeout_s, std::string nonce, uint64_t now_ns);
  // Output read from the workload's stdout (is_err false) or stderr: the running cell's, or none's.
  void output(bool is_err, const char* data, size_t len);
  // A complete message from the driver's pid after the start, and how its main thread looked.
  Actions end_message(std::string_view message, DriverView view, uint64_t now_ns);
  // A look at the driver's main thread that check_driver asked for.
  Actions driver_seen(DriverView view, uint64_t now_ns);
  // A REPL kernel's REPL was seen waiting on an empty stdin (ReplWatch).
  Actions repl_idle(uint64_t now_ns);
  // The cell timer fired.
  Actions timer(uint64_t now_ns);
  // The interpreter (or the box) is gone.
  Actions died(std::string reason, bool oom, uint64_t now_ns);
  // An int request: SIGINT when a cell runs.
  Actions interrupt_request() const;
  // The box's cgroup counted an OOM kill.
  void note_oom() { oom_ = true; }
  bool oom() const { return oom_; }
  // A stop request or a stop signal: the box is torn down, whatever runs.
  Actions stop();
  // A lookup for poll: the cell `id`'s kept result (the last 32, within 256 MiB of output).
  const CellResult* result(std::string_view id) const;
  const CellResult* latest() const { return results_.empty() ? nullptr : results_.back().get(); }
  // The kept result `r` points to, shared (an answer being written outlives its eviction).
  std::shared_ptr<const CellResult> share(const CellResult* r) const;

 private:
  struct Cell {
    std::string id, nonce;
    uint64_t start_ns = 0;
    double timeout_s = 0;
    uint64_t grace_end_ns = 0;
    unsigned claims = 0;        // candidates kept (confirm_idle)
    unsigned unconfirmed = 0;   // claims refused because the main thread was inside the cell
    std::optional<DriverDone> claim;  // the first candidate
  };

  CellResult* finish(CellStatus status, std::optional<int> rc, std::string results, std::string error,
                    bool state_lost, uint64_t now_ns);
  Actions end_confirmed(uint64_t now_ns);
  std::string deadline_message(bool torn_down) const;

  CellMachineConfig cfg_;
  KernelState state_ = KernelState::starting;
  Cell cell_;
  uint64_t cells_ = 0;
  uint64_t refused_ = 0;
  bool oom_ = false;
  std::string dead_reason_;
  OutputBuffer out_, err_;
  std::deque<std::shared_ptr<CellResult>> results_;  // shared: a queued answer may still be writing one
  uint64_t kept_bytes_ = 0;  // the output (out + err) of results_, kept as they come and go
};

}  // namespace kern::kernel
