// Launching a warm kernel's box; see box_launch.h. The launcher branch runs in the forked
// launcher process only; everything else in the supervisor.
#include "runtime/kernel/box_launch.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <optional>

#include "runtime/launcher.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern::kernel {
namespace {

// Fixed fd numbers in the launcher (and so in run_box's view).
constexpr int kCellFd = 3, kEndFd = 4, kStartedFd = 5, kReportFd = 6, kFailFd = 7;

[[noreturn]] void launcher_main(BoxSpec spec, int src[8], pid_t supervisor) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != supervisor) _exit(125);
  // Move every source out of the way first so that dup2 below cannot clobber one.
  int high[8];
  for (int i = 0; i < 8; ++i) high[i] = src[i] < 0 ? -1 : ::fcntl(src[i], F_DUPFD_CLOEXEC, 64);
  for (int i = 0; i < 8; ++i)
    if (high[i] >= 0 && ::dup2(high[i], i) < 0) _exit(125);
  ::syscall(SYS_close_range, 8u, ~0u, 0u);
  // The child moves pass-through fds above 1024 on their way to their numbers (workload_exec.cc),
  // which fails with EINVAL under the common soft RLIMIT_NOFILE of 1024.
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2048 && rl.rlim_max > rl.rlim_cur) {
    rl.rlim_cur = rl.rlim_max < 2048 ? rl.rlim_max : 2048;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  spec.pass_fds = {{kCellFd, kCellFd}, {kEndFd, kEndFd}};
  spec.started_fd = kStartedFd;
  spec.report_fd = kReportFd;
  ::fcntl(kStartedFd, F_SETFD, FD_CLOEXEC);
  ::fcntl(kReportFd, F_SETFD, FD_CLOEXEC);
  ::fcntl(kFailFd, F_SETFD, FD_CLOEXEC);
  Result<int> r = run_box(spec, nullptr);
  if (!r) {
    std::string s = serialize_error(r.error());
    (void)sys::write_all_raw(kFailFd, s.data(), s.size());
    _exit(125);
  }
  _exit(*r & 0xff);
}

}  // namespace

Result<KernelBox> launch_kernel_box(const BoxSpec& spec, bool stdin_pipe) {
  KernelBox kb;
  UniqueFd cell_r, out_w, err_w, in_r, started_w, report_w, fail_w;
  KERN_TRY_ASSIGN(cell_r, sys::make_pipe(O_CLOEXEC, &kb.cell_w));
  KERN_TRY_ASSIGN(kb.out_r, sys::make_pipe(O_CLOEXEC, &out_w));
  KERN_TRY_ASSIGN(kb.err_r, sys::make_pipe(O_CLOEXEC, &err_w));
  KERN_TRY_ASSIGN(kb.started_r, sys::make_pipe(O_CLOEXEC, &started_w));
  KERN_TRY_ASSIGN(kb.report_r, sys::make_pipe(O_CLOEXEC, &report_w));
  KERN_TRY_ASSIGN(kb.fail_r, sys::make_pipe(O_CLOEXEC, &fail_w));
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

  pid_t me = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork the kernel's launcher");
  if (pid == 0) {
    int src[8] = {in_r.get(), out_w.get(), err_w.get(), cell_r.get(), end_w.get(),
                  started_w.get(), report_w.get(), fail_w.get()};
    launcher_main(spec, src, me);
  }
  kb.launcher_pid = pid;
  int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pfd < 0) {
    ::kill(pid, SIGKILL);
    return fail_errno("pidfd_open the kernel's launcher");
  }
  kb.launcher_pidfd.reset(pfd);
  for (int fd : {kb.out_r.get(), kb.err_r.get(), kb.end_r.get(), kb.cell_w.get(), kb.report_r.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (kb.in_w) ::fcntl(kb.in_w.get(), F_SETFL, ::fcntl(kb.in_w.get(), F_GETFL) | O_NONBLOCK);
  return kb;
}

std::string serialize_error(const Error& e) {
  std::string hint = e.hint();
  for (char& ch : hint)
    if (ch == '\n') ch = ' ';
  return std::to_string(static_cast<int>(e.kind())) + "\n" + std::to_string(e.sys_errno()) + "\n" + hint +
         "\n" + e.what();
}

std::optional<Error> read_launcher_error(int fail_r) {
  auto text = sys::read_all(fail_r, 1 << 16, "launcher error");
  if (!text || text->empty()) return std::nullopt;
  return parse_error(*text);
}

std::optional<Error> parse_error(const std::string& s) {
  if (s.empty()) return std::nullopt;
  // kind \n errno \n hint \n message
  size_t a = s.find('\n'), b = a == std::string::npos ? a : s.find('\n', a + 1);
  size_t c = b == std::string::npos ? b : s.find('\n', b + 1);
  if (c == std::string::npos) return Error(ErrorKind::setup, 0, s);
  int kind = std::atoi(s.substr(0, a).c_str());
  if (kind < 0 || kind > static_cast<int>(ErrorKind::internal)) kind = static_cast<int>(ErrorKind::setup);
  // what() ends with ": ENAME" when there was an errno: take it off again so that the rebuilt
  // Error prints the same text and keeps the errno for the exit-code table.
  int err = std::atoi(s.substr(a + 1, b - a - 1).c_str());
  std::string msg = s.substr(c + 1);
  std::string suffix = ": " + errno_name(err);
  if (err != 0 && msg.size() > suffix.size() && msg.compare(msg.size() - suffix.size(), suffix.size(), suffix) == 0)
    msg.resize(msg.size() - suffix.size());
  else
    err = 0;
  Error e(static_cast<ErrorKind>(kind), err, msg);
  std::string hint = s.substr(b + 1, c - b - 1);
  if (!hint.empty()) return std::move(e).with_hint(hint);
  return e;
}

pid_t first_child_of(pid_t pid) {
  std::string id = std::to_string(pid);
  auto text = sys::read_file(AT_FDCWD, "/proc/" + id + "/task/" + id + "/children", 4096);
  if (!text) return 0;
  return static_cast<pid_t>(std::atoi(text->c_str()));
}

pid_t find_box_init(const std::string& box_name, pid_t launcher_pid) {
  auto dir = paths::runtime_dir();
  if (!dir) return 0;
  auto rec = read_box_record(*dir + "/boxes/" + box_name);
  if (!rec || rec->launcher_pid != launcher_pid || rec->init_pid <= 0) return 0;
  if (sys::parent_pid(rec->init_pid) != launcher_pid) return 0;
  return rec->init_pid;
}

}  // namespace kern::kernel
