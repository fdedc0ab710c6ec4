// The warm kernel's supervisor: one per kernel, the owner of its box (a BoxHandle, see
// box_launch.h). Runs in the supervisor process: `kern kernel serve` itself, or the process
// `kern kernel start` forks and detaches.
//
// It speaks the JSON Lines protocol (protocol.h) to its clients, hands one cell at a time
// to the driver, and decides each cell's framing from facts a cell cannot forge by printing:
//   - output is what arrives on the workload's stdout/stderr pipes while the cell runs;
//   - the end of a cell is a message on the end socket whose sender pid (SCM_CREDENTIALS, filled
//     in by the kernel) is the driver's and which carries the cell's nonce (REPL kernels: the
//     REPL blocked reading an empty stdin, read from /proc, see repl.h).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/box_spec.h"
#include "runtime/kernel/drivers.h"
#include "runtime/kernel/protocol.h"
#include "runtime/sys/error.h"

namespace kern::kernel {

struct KernelConfig {
  std::string name;
  Lang lang = Lang::python;
  std::string prompt;  // REPL kernels: a regex the REPL's prompt matches at the end of its output
  uint64_t output_limit = kDefaultOutputLimit;
  unsigned grace_ms = 2000;          // after a deadline's SIGINT, before the kernel is torn down
  unsigned ready_timeout_ms = 60000;  // for the interpreter to become ready
};

// Where the clients of a started kernel connect: <runtime>/kernels/NAME.sock.
std::string kernels_dir(const std::string& runtime_dir);
std::string kernel_socket_path(const std::string& runtime_dir, const std::string& name);
// The supervisor's own messages once the kernel is ready; removed with the socket, or by the
// next verb that finds the socket dead (a SIGKILLed supervisor removes nothing).
std::string kernel_log_path(const std::string& runtime_dir, const std::string& name);

// `kern kernel serve`: the protocol on in_fd/out_fd; kern's own lines go to stderr. Prints the
// {"status":"ready",...} line when the kernel can take cells. Returns 0 once in_fd ends or a
// `stop` was answered (the box is gone by then), or an Error when the kernel could not start.
Result<int> serve_kernel(const BoxSpec& spec, const KernelConfig& cfg, int in_fd, int out_fd);

// `kern kernel start`: claims the socket, forks the detached supervisor and returns once the
// kernel is ready (or with the reason it could not start). The ready object is stored in *ready.
Status start_kernel(const BoxSpec& spec, const KernelConfig& cfg, std::string* ready);

}  // namespace kern::kernel
