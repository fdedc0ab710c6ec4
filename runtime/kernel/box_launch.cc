// Launching a warm kernel's box; see box_launch.h. Supervisor process only.
#include "runtime/kernel/box_launch.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/cgroup/enforcement.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::kernel {

Result<KernelBox> launch_kernel_box(const BoxSpec& spec_in, bool stdin_pipe, const std::string& label) {
  KernelBox kb;
  UniqueFd cell_r, out_w, err_w, in_r;
  KERN_TRY_ASSIGN(cell_r, sys::make_pipe(O_CLOEXEC, &kb.cell_w));
  KERN_TRY_ASSIGN(kb.out_r, sys::make_pipe(O_CLOEXEC, &out_w));
  KERN_TRY_ASSIGN(kb.err_r, sys::make_pipe(O_CLOEXEC, &err_w));
  if (stdin_pipe) {
    KERN_TRY_ASSIGN(in_r, sys::make_pipe(O_CLOEXEC, &kb.in_w));
  } else {
    KERN_TRY_ASSIGN(in_r, sys::open_at(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC));
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return fail_errno("socketpair AF_UNIX SOCK_SEQPACKET");
  kb.end_r.reset(sv[0]);
  UniqueFd end_w(sv[1]);
  int one = 1;
  // Every packet then carries the sender's pid as the kernel saw it: how the supervisor tells the
  // driver from the processes a cell forks.
  if (::setsockopt(kb.end_r.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0)
    return fail_errno("setsockopt SO_PASSCRED");
  // The driver never reads this socket: make its own direction one-way.
  ::shutdown(end_w.get(), SHUT_RD);

  kb.spec = std::make_unique<BoxSpec>(spec_in);
  BoxSpec& spec = *kb.spec;
  // The workload's stdio and its two kernel channels, at their numbers in the box.
  spec.pass_fds = {{in_r.get(), 0}, {out_w.get(), 1}, {err_w.get(), 2}, {cell_r.get(), 3}, {end_w.get(), 4}};
  spec.started_fd = spec.report_fd = -1;

  KERN_TRY_ASSIGN(std::string runtime_dir, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRegistration reg, BoxRegistration::claim(runtime_dir, spec.name));
  KERN_TRY_ASSIGN(kb.session, BoxSession::start(spec, SessionStart{runtime_dir, reg.scratch_dir(), nullptr, std::nullopt}));
  BoxRecord rec = kb.session->started_record();
  rec.command = label;
  rec.kind = "kernel";
  (void)reg.write(rec);
  // No started fd or report fd here (the supervisor answers its own caller): the memory verdict
  // goes into the ready line.
  kb.memory_verdict = started_memory_byte(kb.session->announce_started(nullptr));
  kb.name = std::make_unique<BoxRegistration>(std::move(reg));
  for (int fd : {kb.out_r.get(), kb.err_r.get(), kb.end_r.get(), kb.cell_w.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (kb.in_w) ::fcntl(kb.in_w.get(), F_SETFL, ::fcntl(kb.in_w.get(), F_GETFL) | O_NONBLOCK);
  return kb;
}

}  // namespace kern::kernel
