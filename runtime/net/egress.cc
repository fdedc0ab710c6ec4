// --egress-allow, launcher side; see egress.h. Launcher only (and the fork children it starts,
// which go straight into egress_helpers.h's mains).
#include "runtime/net/egress.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <linux/close_range.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <initializer_list>

#include "runtime/net/egress_helpers.h"
#include "runtime/net/helper_proc.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"

namespace kern::net {
namespace {

std::string how_it_ended(pid_t pid) {
  int st = 0;
  if (::waitpid(pid, &st, WNOHANG) != pid) return "ended";
  if (WIFSIGNALED(st)) return std::string("killed by ") + ::strsignal(WTERMSIG(st));
  return "exited with status " + std::to_string(WEXITSTATUS(st));
}

}  // namespace

std::vector<std::string> egress_proxy_env() {
  std::string url = "http://127.0.0.1:" + std::to_string(kEgressProxyPort);
  return {"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
          "NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"};
}

Result<std::unique_ptr<EgressHelpers>> EgressHelpers::start(const BoxSpec& spec, int box_pidfd) {
  std::unique_ptr<EgressHelpers> h(new EgressHelpers());
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair (egress relay)");
  UniqueFd relay_end(sv[0]), proxy_end(sv[1]);
  UniqueFd ready_write;
  KERN_TRY_ASSIGN(UniqueFd ready_read, sys::make_pipe(O_CLOEXEC, &ready_write));
  // Held by the proxy and each connection process it forks: at its end of file every one of
  // them is gone, their records written (stop() waits for it).
  UniqueFd gone_write;
  KERN_TRY_ASSIGN(UniqueFd gone_read, sys::make_pipe(O_CLOEXEC, &gone_write));
  pid_t launcher = ::getpid();

  EgressPolicy policy;
  policy.allow = spec.egress_allow;
  h->proxy_ = ::fork();
  if (h->proxy_ < 0) return fail_errno("fork (egress proxy)");
  if (h->proxy_ == 0) {
    become_helper(launcher, {proxy_end.get(), spec.report_fd, gone_write.get()});
    egress_proxy_main(policy, spec.name, proxy_end.get(), spec.report_fd);
  }
  h->proxy_pidfd_ = pidfd_of(h->proxy_);
  h->relay_ = ::fork();
  if (h->relay_ < 0) return fail_errno("fork (egress relay)");
  if (h->relay_ == 0) {
    become_helper(launcher, {box_pidfd, relay_end.get(), ready_write.get()});
    egress_relay_main(box_pidfd, kEgressProxyPort, relay_end.get(), ready_write.get());
  }
  h->relay_pidfd_ = pidfd_of(h->relay_);
  relay_end.reset();
  proxy_end.reset();
  ready_write.reset();
  gone_write.reset();
  h->connections_gone_ = gone_read.release();
  if (h->relay_pidfd_ < 0 || h->proxy_pidfd_ < 0) return fail_errno("pidfd_open (egress helpers)");
  char b = 0;
  ssize_t n;
  do n = ::read(ready_read.get(), &b, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    return fail(ErrorKind::setup, 0, "the egress relay did not start in the box's network namespace (" +
                                         how_it_ended(h->relay_) + ")");
  h->wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (h->wake_fd_ < 0) return fail_errno("eventfd (egress helpers)");
  h->watcher_ = std::thread([p = h.get()] { p->watch(); });
  return h;
}

// The launcher's watch over its helpers: the first one to end takes the box's egress with it
// (the other sees the unix socket close and exits), and the caller is told once.
void EgressHelpers::watch() {
  struct pollfd p[3] = {{relay_pidfd_, POLLIN, 0}, {proxy_pidfd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  for (;;) {
    int r = ::poll(p, 3, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || stopping_.load() || p[2].revents) return;
    // When both have ended, the one that did not exit 0 went first: each helper exits 0 when it
    // sees the other one's end of the unix socket close, which can happen before the first one's
    // exit is visible on its pidfd; so a clean exit waits a moment for the other's.
    if ((p[0].revents & POLLIN) != (p[1].revents & POLLIN)) {
      int other = (p[0].revents & POLLIN) ? 1 : 0;
      siginfo_t first {};
      (void)::waitid(P_PID, static_cast<id_t>(other == 1 ? relay_ : proxy_), &first, WEXITED | WNOHANG | WNOWAIT);
      if (first.si_code == CLD_EXITED && first.si_status == 0) {
        struct pollfd q = {p[other].fd, POLLIN, 0};
        if (::poll(&q, 1, 200) > 0) p[other].revents = q.revents;
      }
    }
    siginfo_t si[2] = {};
    pid_t pids[2] = {relay_, proxy_};
    int chosen = -1;
    for (int i = 0; i < 2; ++i) {
      if (!(p[i].revents & POLLIN)) continue;
      // The exit status is taken by stop() (waitpid); WNOWAIT leaves it there.
      (void)::waitid(P_PID, static_cast<id_t>(pids[i]), &si[i], WEXITED | WNOHANG | WNOWAIT);
      bool clean = si[i].si_code == CLD_EXITED && si[i].si_status == 0;
      if (chosen < 0 || !clean) chosen = i;
    }
    if (chosen < 0) continue;
    const char* who = chosen == 0 ? "relay" : "proxy";
    std::string how = si[chosen].si_code == CLD_KILLED || si[chosen].si_code == CLD_DUMPED
                          ? std::string("killed by ") + ::strsignal(si[chosen].si_status)
                          : "exited with status " + std::to_string(si[chosen].si_status);
    if (!stopping_.load())
      log::warning(std::string("the egress ") + who + " ended (" + how + "): the box has no network egress from now on");
    return;
  }
}

void EgressHelpers::stop() {
  if (stopping_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (watcher_.joinable()) watcher_.join();
  for (int fd : {relay_pidfd_, proxy_pidfd_})
    if (fd >= 0) ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
  for (pid_t pid : {relay_, proxy_})
    if (pid > 0)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
  // The connection processes got SIGTERM with the proxy's end: each ends its copy loop and
  // writes its record. A moment for that, so the box's last requests are in its report before
  // the exited record; one stuck elsewhere (a slow name lookup) is not waited for longer.
  if (connections_gone_ >= 0) {
    struct pollfd q = {connections_gone_, POLLIN, 0};
    while (::poll(&q, 1, kConnectionsGoneMs) < 0 && errno == EINTR) {
    }
  }
  for (int fd : {relay_pidfd_, proxy_pidfd_, wake_fd_, connections_gone_})
    if (fd >= 0) ::close(fd);
  relay_pidfd_ = proxy_pidfd_ = wake_fd_ = connections_gone_ = -1;
}

EgressHelpers::~EgressHelpers() { stop(); }

}  // namespace kern::net
