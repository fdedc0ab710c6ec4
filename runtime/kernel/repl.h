// When has a REPL finished a cell? For a REPL kernel (any interpreter given as a command, with no
// driver inside) the supervisor types the cell into the REPL's stdin and decides its end from
// what the kernel says about the REPL, not from what the REPL prints:
//   1. everything written to its stdin pipe has been read (FIONREAD on the pipe is 0), and
//   2. the REPL's main thread is blocked in read(2) on fd 0 (/proc/PID/syscall), or, for a REPL
//      that waits in poll/select/epoll instead, in one of those;
//   3. with --prompt RE, the output (stdout or stderr) also ends with a match of RE; without it,
//      2 must be a read on fd 0.
// Output that looks like a prompt cannot end a cell by itself: the REPL must also be waiting for
// input with nothing left to read. Supervisor process only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <regex>
#include <string>

#include "runtime/sys/error.h"

namespace kern::kernel {

// What /proc/PID/syscall says the process is doing (pure, unit-tested).
enum class WaitKind { running, stdin_read, event_wait, other, unknown };
WaitKind classify_syscall_line(const std::string& text);

class ReplWatch {
 public:
  static Result<ReplWatch> create(const std::string& prompt);

  void start(pid_t repl_pid, int stdin_w);
  void cell_started() { backoff_ns_ = kFirstCheckNs; }
  void cell_written() { backoff_ns_ = kFirstCheckNs; }
  void saw_output() { backoff_ns_ = kFirstCheckNs; }
  // Whether the REPL is done with its input. `out`/`err` are the cell's output so far (null
  // before the first cell, when only the REPL's idleness counts).
  bool idle(const std::string* out, const std::string* err);
  // When to look again (grows while nothing happens).
  uint64_t next_check_ns();
  // Removes the trailing prompt from the cell's output.
  void strip_prompt(std::string& out, std::string& err) const;

 private:
  static constexpr uint64_t kFirstCheckNs = 200000;   // 0.2 ms
  static constexpr uint64_t kMaxCheckNs = 20000000;   // 20 ms
  bool prompt_at_end(const std::string& s, size_t* pos) const;

  std::optional<std::regex> prompt_;
  pid_t pid_ = 0;
  int stdin_w_ = -1;
  uint64_t backoff_ns_ = kFirstCheckNs;
};

}  // namespace kern::kernel
