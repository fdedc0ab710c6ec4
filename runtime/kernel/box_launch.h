// The box a warm kernel lives in, seen from its supervisor. Supervisor side. This file is the
// one place where a kernel's box is launched (launch_kernel_box) and its init found again
// (find_box_init); the rest of runtime/kernel/ sees only KernelBox's descriptors, so the launch
// can change inside it (a BoxHandle owned by the supervisor) without touching the cells.
//
// The supervisor forks one "launcher" process that calls run_box() (so the box is the
// launcher's child and dies with it, and the launcher dies with the supervisor through
// PR_SET_PDEATHSIG): supervisor -> launcher -> box init -> interpreter (the workload).
// The workload gets: stdin (/dev/null, or a pipe for a REPL), stdout and stderr pipes read by the
// supervisor, fd 3 (cells, a pipe written by the supervisor) and fd 4 (ends of cells, a
// SOCK_SEQPACKET socket whose messages carry the sender's pid).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::kernel {

struct KernelBox {
  pid_t launcher_pid = 0;
  UniqueFd launcher_pidfd;
  UniqueFd cell_w;     // -> box fd 3
  UniqueFd end_r;      // <- box fd 4 (SO_PASSCRED set)
  UniqueFd out_r;      // the workload's stdout
  UniqueFd err_r;      // the workload's stderr
  UniqueFd in_w;       // the workload's stdin (REPL kernels only)
  UniqueFd started_r;  // run_box's started bytes
  UniqueFd report_r;   // run_box's report lines (started, exited)
  UniqueFd fail_r;     // the launcher's Error when run_box failed
};

// Forks the launcher. `spec` is copied; its fds, started and report channels are replaced.
Result<KernelBox> launch_kernel_box(const BoxSpec& spec, bool stdin_pipe);

// Reads an Error the launcher wrote on fail_r (after it exited), if any.
std::optional<Error> read_launcher_error(int fail_r);
// An Error through a pipe between kern processes: kind, errno, hint and text survive.
std::string serialize_error(const Error& e);
std::optional<Error> parse_error(const std::string& text);

// Host pid of box init, from the box registry, checked to be the launcher's child; 0 if unknown.
pid_t find_box_init(const std::string& box_name, pid_t launcher_pid);
// The first child of `pid` (/proc/PID/task/PID/children), 0 when none.
pid_t first_child_of(pid_t pid);

}  // namespace kern::kernel
