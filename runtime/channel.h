// The parent<->child channel: a close-on-exec pipe from the box to the launcher that carries
// only failures. Silence followed by end-of-file means the workload's execve succeeded (every
// write end is close-on-exec and the box's init closes its own copy after forking the
// workload). Messages are fixed-size records written with one write(2) (below PIPE_BUF, so
// atomic); the reader rejects anything it does not recognise.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/sys/error.h"

namespace kern {

enum class ChildReportType : uint32_t {
  setup_failed = 1,  // a step of building the box failed (exit 125)
  exec_failed = 2,   // chdir/execve of the workload failed (126/127)
};

struct ChildReport {
  uint32_t magic;
  uint32_t type;
  int32_t err;
  int32_t kind;       // ErrorKind
  char what[64];      // the operation: "mount", "execve", "pivot_root"
  char detail[360];   // the thing it touched: a path, a command name
};
static_assert(sizeof(ChildReport) < 512, "must stay below PIPE_BUF");

// Child side: async-signal-safe, no allocation.
void send_child_report(int fd, ChildReportType type, ErrorKind kind, int err, const char* what,
                       const char* detail) noexcept;

// Parent side: reads until EOF. Ok(nullopt-like: empty Error list) when nothing was sent.
// Returns the child's failure as an Error, or success when the channel closed silently.
Status read_child_reports(int fd);

}  // namespace kern
