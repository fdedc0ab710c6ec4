// kern exec; see box_exec.h. The exec side, except for joiner_main and process_main, which run
// in the joiner and in the exec'd process and never return.
#include "runtime/box_exec.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "runtime/blocked_signals.h"
#include "runtime/box_join.h"
#include "runtime/box/terminal.h"
#include "runtime/caps.h"
#include "runtime/channel.h"
#include "runtime/box/child_args.h"
#include "runtime/exit_status.h"
#include "runtime/registry.h"
#include "runtime/launcher_loop.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

// Everything the joiner and the process use, computed on the exec side before clone.
struct JoinArgs {
  int join_pidfd = -1;
  unsigned long long namespaces = 0;
  int pidfd_sock = -1;  // the joiner sends the process's pidfd here
  int go_read = -1;     // one byte from kern exec once it holds that pidfd
  bool die_with_caller = true;  // false for the OCI mode's exec --detach
  ChildArgs* work = nullptr;
  // The fds the joiner keeps across the join (stdio aside): the ones above, the channel, the
  // terminal socket and the pass-through fds' sources. Everything else of kern exec's (the
  // cgroup directory, a caller's fd) is closed before the first setns.
  std::vector<int>* keep = nullptr;
};

[[noreturn]] void die(const JoinArgs& j, int err, const char* what, const char* detail) {
  send_setup_failed(j.work->channel_fd, ErrorKind::setup, err, what, detail);
  _exit(125);
}

// The exec'd process, in the box's namespaces, a child of kern exec.
[[noreturn]] void process_main(const JoinArgs& j) {
  // Before the go byte: kern exec was alive when it wrote it, so a later death of it kills this
  // process, and an earlier one is the read's end-of-file.
  if (j.die_with_caller && ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die(j, errno, "prctl PR_SET_PDEATHSIG", "");
  char go = 0;
  ssize_t n;
  do n = ::read(j.go_read, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || go != 'G') _exit(125);
  ::close(j.go_read);
  ChildArgs& a = *j.work;
  if (a.pty_sock >= 0) {
    // /dev/pts/ptmx of the box's mount namespace: its own devpts instance.
    BoxTerminal t = make_box_terminal(a.pty_sock, a.has_winsize ? &a.winsize : nullptr);
    if (t.slave < 0) die(j, t.err, t.what, "-t");
    ::close(a.pty_sock);
    a.pty_sock = -1;
    a.pty_slave = t.slave;
  }
  exec_workload(a);
}

// The joiner: enters the box's namespaces (enter_box_raw, box_join.h), then spawns the process,
// which inherits the joiner's non-dumpable mark (its memory is a copy of this one's) and keeps it
// until its execve: execve gives a plain program the mark back (dumpable again, its mm then of
// the box's user namespace), as any process of the box has it.
[[noreturn]] void joiner_main(const JoinArgs& j) {
  const char* what = "";
  if (int r = enter_box_raw(j.join_pidfd, j.namespaces, j.keep->data(), j.keep->size(), &what); r != 0)
    die(j, r, what, "");
  ::close(j.join_pidfd);
  int pidfd = -1;
  struct clone_args ca;
  std::memset(&ca, 0, sizeof ca);
  // CLONE_PARENT: the process is kern exec's child, so kern exec waits for it and it dies with
  // kern exec; the kernel wants exit_signal 0 with it (the parent's own is used).
  ca.flags = CLONE_PARENT | CLONE_PIDFD;
  ca.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  pid_t pid = static_cast<pid_t>(::syscall(SYS_clone3, &ca, sizeof ca));
  if (pid == 0) process_main(j);
  if (pid < 0) die(j, errno, "clone3", "the exec'd process");
  int r = sys::send_fd_raw(j.pidfd_sock, pidfd);
  _exit(r == 0 ? 0 : 125);
}

Status seqpacket_pair(UniqueFd& ours, UniqueFd& theirs) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair");
  ours.reset(sv[0]);
  theirs.reset(sv[1]);
  return {};
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {
  }
  return status;
}

// The joiner's or the process's own word on what failed, if either sent one. A seccomp
// listener on the way goes to `agent` (the process `pid` waits on the agent from then on).
std::optional<Error> reported_failure(ChannelReader& reader, const std::function<Status(pid_t, int)>& agent = {},
                                      pid_t pid = 0) {
  for (;;) {
    auto m = reader.next();
    if (!m) return std::move(m).error();
    if (!*m) return std::nullopt;
    if ((*m)->type == ChannelMsgType::setup_failed && (*m)->error) return std::move(*(*m)->error);
    if ((*m)->type == ChannelMsgType::seccomp_listener) {
      UniqueFd listener = reader.take_fd();
      if (!listener || !agent) return Error(ErrorKind::internal, EPROTO, "a seccomp listener nobody asked for");
      if (auto s = agent(pid, listener.get()); !s) return std::move(s).error();
    }
  }
}

Error not_running(const std::string& name) {
  return std::move(Error(ErrorKind::config, 0, "no running box named \"" + log::sanitize(name) + "\""))
      .with_hint("kern ps lists the running boxes");
}

}  // namespace

ExecPlan exec_plan_for(const BoxLockdown& l, const ExecOverrides& o) {
  ExecPlan p;
  p.argv = o.argv;
  p.env = o.env;
  if (!p.argv.empty()) p.candidates = exec_candidates(p.argv[0], p.env);
  p.cwd = o.cwd.value_or(l.cwd);
  p.creds = o.user ? box_credentials(o.user->first, o.user->second, true, l.caps_keep)
                   : box_credentials(l.uid, l.gid, l.user_set, l.caps_keep);
  p.apparmor_exec = l.apparmor_exec;  // the same profile as the box's workload
  p.rlimits = l.rlimits;              // and the same --ulimit
  return p;
}

Result<ExecTarget> find_exec_target(const std::string& runtime_dir, const std::string& name) {
  std::optional<BoxRecord> rec;
  for (auto& b : list_boxes(runtime_dir, false))
    if (b.name == name) rec = std::move(b);
  if (!rec || rec->init_pid <= 0) return fail(not_running(name));
  KERN_TRY_ASSIGN(BoxLockdown l, read_lockdown(runtime_dir, name));
  if (l.init_pid != rec->init_pid) return fail(not_running(name));
  ExecTarget t;
  t.name = name;
  t.cgroup = rec->cgroup;
  t.lockdown = std::move(l);
  auto holder = open_namespace_holder(t.lockdown.init_pid);
  if (!holder) {
    if (holder.error().sys_errno() == ESRCH) return fail(not_running(name));
    return fail(std::move(holder).error());
  }
  t.join_pidfd = std::move(holder->pidfd);
  t.join_pid = holder->pid;
  // From here the pidfd names one process whatever becomes of the number, init's child or init:
  // if init has the recorded start time it is this box's init (a recycled pid would not), and
  // setns through the pidfd fails once that process has died.
  if (sys::process_start_time(t.lockdown.init_pid) != t.lockdown.init_start) return fail(not_running(name));
  return t;
}

Result<pid_t> start_box_joiner(const ExecTarget& target) {
  UniqueFd cgroup;
  if (!target.cgroup.empty()) {
    auto fd = sys::open_at(AT_FDCWD, target.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!fd) return fail(std::move(fd).error().with_context("opening the box's cgroup"));
    cgroup = std::move(*fd);
  }
  struct clone_args ca;
  std::memset(&ca, 0, sizeof ca);
  ca.exit_signal = SIGCHLD;
  if (cgroup) {
    ca.flags |= CLONE_INTO_CGROUP;
    ca.cgroup = static_cast<uint64_t>(cgroup.get());
  }
  pid_t pid = static_cast<pid_t>(::syscall(SYS_clone3, &ca, sizeof ca));
  if (pid < 0) {
    Error e(ErrorKind::setup, errno, "clone3 into the box's cgroup");
    if (cgroup && (errno == EACCES || errno == EPERM))
      return fail(std::move(e).with_hint("this user may not move a process into \"" + target.cgroup + "\""));
    return fail(std::move(e));
  }
  return pid;
}

Result<int> run_exec(const ExecTarget& target, const ExecPlan& plan, const ExecTerminal& term,
                     const ExecDetached& detached) {
  ChildArgs work;
  work.exec = &plan;
  work.last_cap = read_last_cap();
  work.seccomp = target.seccomp ? *target.seccomp : seccomp_program(target.lockdown.seccomp);
  work.seccomp_notify = static_cast<bool>(target.seccomp_agent);
  std::vector<std::string> argv_store = plan.argv, env_store = plan.env;
  for (auto& a : argv_store) work.argv.push_back(a.data());
  work.argv.push_back(nullptr);
  for (auto& e : env_store) work.envp.push_back(e.data());
  work.envp.push_back(nullptr);

  // Unix sockets from the box's processes: the process's pidfd (from the joiner) and, for -t,
  // the master of the terminal the process makes in the box.
  UniqueFd term_sock, term_child, pidfd_sock, pidfd_child;
  if (term.tty) {
    KERN_TRY(seqpacket_pair(term_sock, term_child));
    work.pty_sock = term_child.get();
    if (term.size) {
      work.winsize = *term.size;
      work.has_winsize = true;
    } else if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &work.winsize) == 0) {
      work.has_winsize = true;
    }
  }
  KERN_TRY(seqpacket_pair(pidfd_sock, pidfd_child));
  UniqueFd go_write, chan_write;
  KERN_TRY_ASSIGN(UniqueFd go_read, sys::make_pipe(O_CLOEXEC, &go_write));
  UniqueFd chan_read;
  if (work.seccomp_notify) {
    // A socket, for the listener's SCM_RIGHTS.
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair (channel)");
    chan_read.reset(sv[0]);
    chan_write.reset(sv[1]);
  } else {
    KERN_TRY_ASSIGN(chan_read, sys::make_pipe(O_CLOEXEC, &chan_write));
  }
  work.channel_fd = chan_write.get();

  JoinArgs j;
  j.join_pidfd = target.join_pidfd.get();
  j.namespaces = target.lockdown.namespaces;
  j.pidfd_sock = pidfd_child.get();
  j.go_read = go_read.get();
  j.work = &work;
  j.die_with_caller = !detached.enabled;
  std::vector<int> keep = {j.join_pidfd, j.pidfd_sock, j.go_read, work.channel_fd, work.pty_sock};
  for (const auto& [from, to] : plan.pass_fds) keep.push_back(from);
  j.keep = &keep;
  std::vector<int> pass_tmp(plan.pass_fds.size() + 2);
  work.pass_tmp = pass_tmp.data();

  BlockedSignals sigs;  // forwarded to the process by supervise(); the process resets its mask
  if (sigs.fd() < 0) return fail_errno("signalfd");
  ::signal(SIGPIPE, SIG_IGN);
  KERN_TRY_ASSIGN(pid_t joiner, start_box_joiner(target));
  if (joiner == 0) joiner_main(j);
  chan_write.reset();
  pidfd_child.reset();
  term_child.reset();
  go_read.reset();
  ChannelReader reader(chan_read.get());

  auto proc = sys::recv_fd(pidfd_sock.get(), "the exec'd process's pidfd");
  int jstatus = wait_child(joiner);
  if (!proc) {
    go_write.reset();
    if (auto e = reported_failure(reader)) return fail(std::move(*e));
    return fail(Error(ErrorKind::setup, 0, "the joiner ended without a word (" +
                                               std::to_string(exit_code_from_wait_status(jstatus)) + ")"));
  }
  pid_t pid = 0;
  {
    // The process is this one's child (CLONE_PARENT): its pid, for waitpid, from its pidfd.
    std::string fdinfo = "/proc/self/fdinfo/" + std::to_string(proc->get());
    auto text = sys::read_file(AT_FDCWD, fdinfo, 8192);
    if (text) {
      size_t at = text->find("\nPid:\t");
      if (at != std::string::npos) pid = static_cast<pid_t>(std::strtol(text->c_str() + at + 6, nullptr, 10));
    }
    if (pid <= 0) {
      ::syscall(SYS_pidfd_send_signal, proc->get(), SIGKILL, nullptr, 0);
      return fail(ErrorKind::internal, EPROTO, "the exec'd process has no pid in " + fdinfo);
    }
  }
  for (const auto& dir : target.join_cgroup_dirs) {
    if (auto j = sys::write_knob(AT_FDCWD, dir + "/cgroup.procs", std::to_string(pid)); !j) {
      ::syscall(SYS_pidfd_send_signal, proc->get(), SIGKILL, nullptr, 0);
      wait_child(pid);
      return fail(std::move(j).error());
    }
  }
  if (sys::write_all_raw(go_write.get(), "G", 1) != 0) {
    ::syscall(SYS_pidfd_send_signal, proc->get(), SIGKILL, nullptr, 0);
    wait_child(pid);
    return fail(Error(ErrorKind::setup, errno, "signal the exec'd process to start"));
  }
  go_write.reset();

  UniqueFd master;
  if (term_sock) {
    auto m = sys::recv_fd(term_sock.get(), "the exec'd process's terminal");
    if (m) master = std::move(*m);
  }
  // Silence, then end-of-file, is an execve that succeeded: the channel is close-on-exec.
  std::optional<Error> failed = reported_failure(reader, target.seccomp_agent, pid);
  if (failed || (term.tty && !master)) {
    if (failed) ::syscall(SYS_pidfd_send_signal, proc->get(), SIGKILL, nullptr, 0);
    wait_child(pid);
    if (failed) return fail(std::move(*failed));
    return fail(ErrorKind::setup, EPROTO, "the exec'd process sent no terminal");
  }
  if (detached.on_started) {
    if (auto s = detached.on_started(pid, master ? master.get() : -1); !s) {
      if (detached.enabled) ::syscall(SYS_pidfd_send_signal, proc->get(), SIGKILL, nullptr, 0);
      if (detached.enabled) wait_child(pid);
      return fail(std::move(s).error());
    }
  }
  if (detached.enabled) return 0;

  RawCallerTerminal raw(term.tty && term.interactive);
  SuperviseInput in{proc->get(), 0, sigs.fd(), master ? master.get() : -1, term.interactive};
  auto sup = supervise(in);
  int status = wait_child(pid);
  if (!sup) return fail(std::move(sup).error());
  return exit_code_from_wait_status(status);
}

}  // namespace kern
