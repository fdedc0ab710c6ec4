// The box a warm kernel lives in, seen from its supervisor. Supervisor side. This file is the
// one place where a kernel's box is launched: the supervisor is a client of the BoxSession
// (runtime/box_session.h), as `kern box` is, and owns it directly (box init is the supervisor's child and dies with it
// through PR_SET_PDEATHSIG): supervisor -> box init -> interpreter (the workload). No launcher
// process in between, nothing read back from the registry.
//
// The workload gets: stdin (/dev/null, or a pipe for a REPL), stdout and stderr pipes read by the
// supervisor, fd 3 (cells, a pipe written by the supervisor) and fd 4 (ends of cells, a
// SOCK_SEQPACKET socket whose messages carry the sender's pid).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "runtime/box_session.h"
#include "runtime/box_spec.h"
#include "runtime/registry.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::kernel {

struct KernelBox {
  std::unique_ptr<BoxRegistration> name;  // the kernel's name, held while it lives
  std::unique_ptr<BoxSpec> spec;        // the box's, read by its session: declared first, gone last
  std::unique_ptr<BoxSession> session;  // box init: pidfd, cgroup, reap and teardown
  BoxHandle& box() { return session->box(); }
  UniqueFd cell_w;     // -> box fd 3
  UniqueFd end_r;      // <- box fd 4 (SO_PASSCRED set)
  UniqueFd out_r;      // the workload's stdout
  UniqueFd err_r;      // the workload's stderr
  UniqueFd in_w;       // the workload's stdin (REPL kernels only)
  unsigned char memory_verdict = 0;  // the started fd's byte 1: 0 undetermined, 1, 2
};

// Claims the name, starts the box and returns once the interpreter has exec'd (or with the
// error that kept it from starting: nothing is left then). `spec` is copied; its fds and caller
// channels are replaced. `label` is the command `kern ps` shows.
Result<KernelBox> launch_kernel_box(const BoxSpec& spec, bool stdin_pipe, const std::string& label);

}  // namespace kern::kernel
