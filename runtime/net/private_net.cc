// --net private, launcher side; see private_net.h. Launcher only (and the fork child that goes
// straight into pasta's execve).
#include "runtime/net/private_net.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/net/helper_proc.h"
#include "runtime/net/port_check.h"
#include "runtime/net/private_net_plan.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"

namespace kern::net {
namespace {

// pasta configures the interface and binds the published ports in a few tens of milliseconds;
// a pasta that has not done so by then is taken as failed.
constexpr int kReadyTimeoutMs = 10000;

Result<pid_t> pid_of_pidfd(int pidfd) {
  KERN_TRY_ASSIGN(std::string info, sys::read_file(AT_FDCWD, "/proc/self/fdinfo/" + std::to_string(pidfd), 1 << 16));
  size_t at = info.find("\nPid:");
  if (at == std::string::npos) return fail(ErrorKind::internal, 0, "no Pid in the box's pidfd fdinfo");
  long pid = std::strtol(info.c_str() + at + 5, nullptr, 10);
  if (pid <= 0) return fail(ErrorKind::setup, ESRCH, "box init ended before its network was set up");
  return static_cast<pid_t>(pid);
}

// The last line pasta wrote that says something (it also reports each failed attempt to reach
// a system logger, which says nothing about the box).
std::string last_words(int log_fd) {
  char buf[8192];
  ssize_t n = ::pread(log_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n)), last;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    // "1796131673.9777: message": the time stamp pasta puts before each line is dropped.
    size_t stamp = line.find_first_not_of("0123456789.");
    if (stamp != std::string::npos && stamp > 0 && line.compare(stamp, 2, ": ") == 0) line = line.substr(stamp + 2);
    if (!line.empty() && line.rfind("Failed to send", 0) != 0) last = line;
    pos = nl + 1;
  }
  return log::sanitize(last);
}

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by ") + ::strsignal(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

Result<std::unique_ptr<PrivateNetwork>> PrivateNetwork::start(const BoxSpec& spec, int box_pidfd) {
  std::unique_ptr<PrivateNetwork> n(new PrivateNetwork());
  KERN_TRY_ASSIGN(pid_t box_pid, pid_of_pidfd(box_pidfd));
  // Every published port free on every address asked for, just before pasta binds them: pasta
  // itself is content with one family of the two.
  KERN_TRY(check_ports_free(spec.private_net.publish));
  UniqueFd log_fd(static_cast<int>(::syscall(SYS_memfd_create, "kern-pasta-log", MFD_CLOEXEC)));
  if (!log_fd) return fail_errno("memfd_create (pasta's log)");
  UniqueFd ready_w;
  KERN_TRY_ASSIGN(UniqueFd ready_r, sys::make_pipe(O_CLOEXEC, &ready_w));
  // Everything the child needs is made here: between fork and execve it only calls into libc.
  std::vector<std::string> args = pasta_argv(spec.private_net, box_pid, ready_w.get());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string& path = spec.private_net.pasta;
  pid_t launcher = ::getpid();

  n->pid_ = ::fork();
  if (n->pid_ < 0) return fail_errno("fork (pasta)");
  if (n->pid_ == 0) {
    become_helper(launcher, {log_fd.get(), ready_w.get()});
    ::dup2(log_fd.get(), STDERR_FILENO);
    // An ignored SIGPIPE survives execve, and pasta takes one it did not set up as a failure.
    ::signal(SIGPIPE, SIG_DFL);
    ::fcntl(ready_w.get(), F_SETFD, 0);
    ::execv(path.c_str(), argv.data());
    ::dprintf(STDERR_FILENO, "execve %s: %s\n", path.c_str(), ::strerror(errno));
    ::_exit(127);
  }
  n->pidfd_ = pidfd_of(n->pid_);
  ready_w.reset();
  if (n->pidfd_ < 0) return fail_errno("pidfd_open (pasta)");

  struct pollfd p = {ready_r.get(), POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, kReadyTimeoutMs);
  while (r < 0 && errno == EINTR);
  char b[32];
  ssize_t got = r > 0 ? ::read(ready_r.get(), b, sizeof b) : -1;
  if (got > 0) {
    n->wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
    if (n->wake_fd_ < 0) return fail_errno("eventfd (pasta's watch)");
    n->watcher_ = std::thread([p = n.get()] { p->watch(); });
    return n;
  }

  // Not ready: pasta said why on its stderr, or took too long.
  ::syscall(SYS_pidfd_send_signal, n->pidfd_, SIGKILL, nullptr, 0);
  int status = 0;
  while (::waitpid(n->pid_, &status, 0) < 0 && errno == EINTR) {
  }
  n->pid_ = -1;
  std::string why = r == 0 ? "did not configure the box's network within " + std::to_string(kReadyTimeoutMs / 1000) + " s"
                           : how_it_ended(status);
  std::string said = last_words(log_fd.get());
  Error e(ErrorKind::setup, 0, "--net private: pasta " + why + (said.empty() ? "" : ": " + said));
  if (said.find("bind") != std::string::npos)
    e.with_hint("a published host port is taken, or below 1024 (net.ipv4.ip_unprivileged_port_start)");
  return fail(std::move(e));
}

// The launcher's watch over pasta, until stop(): an end before it is told once.
void PrivateNetwork::watch() {
  struct pollfd p[2] = {{pidfd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  int r;
  do r = ::poll(p, 2, -1);
  while (r < 0 && errno == EINTR);
  if (r <= 0 || stopping_.load() || p[1].revents) return;
  siginfo_t si {};
  (void)::waitid(P_PID, static_cast<id_t>(pid_), &si, WEXITED | WNOHANG | WNOWAIT);  // stop() reaps
  std::string how = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED
                        ? std::string("killed by ") + ::strsignal(si.si_status)
                        : "exited with status " + std::to_string(si.si_status);
  if (!stopping_.load()) log::warning("pasta ended (" + how + "): the box has no network from now on");
}

void PrivateNetwork::stop() {
  if (stopping_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (watcher_.joinable()) watcher_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
  if (pidfd_ >= 0) ::syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
  else if (pid_ > 0) ::kill(pid_, SIGKILL);  // our unreaped child: the pid is still its own
  if (pid_ > 0)
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  if (pidfd_ >= 0) ::close(pidfd_);
  pid_ = -1;
  pidfd_ = -1;
}

PrivateNetwork::~PrivateNetwork() { stop(); }

}  // namespace kern::net
