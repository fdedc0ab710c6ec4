// The network namespace helper; see netns_helper.h.
#include "runtime/netns_helper.h"

#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#ifndef SIOCGSKNETNS
#define SIOCGSKNETNS 0x894C
#endif

namespace kern {
namespace {

// The helper shares the launcher's memory, thread pointer included, so libc's wrappers (which
// write errno, a thread-local, on failure) are off limits there: these return -errno instead.
#if defined(__x86_64__) && !defined(__ILP32__)
constexpr bool kRawSyscalls = true;
long raw(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
constexpr bool kRawSyscalls = true;
long raw(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
}
#else
// No helper here (netns_helper_supported() is false); bring_loopback_up still works.
constexpr bool kRawSyscalls = false;
long raw(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  long r = ::syscall(n, a, b, c, d, e);
  return r < 0 ? -errno : r;
}
#endif

// What the helper says: 0 and the namespace's fd, or the errno and the step that failed.
enum HelperStep : int { step_none = 0, step_setns_user, step_unshare_net, step_loopback, step_get_netns };

struct HelperWord {
  int err;
  int step;
};

const char* step_what(int step) {
  switch (step) {
    case step_setns_user: return "setns CLONE_NEWUSER (network namespace helper)";
    case step_unshare_net: return "unshare CLONE_NEWNET";
    case step_loopback: return "ioctl SIOCSIFFLAGS lo";
    case step_get_netns: return "ioctl SIOCGSKNETNS";
  }
  return "network namespace helper";
}

// The one message on the helper's socket: the word, and room for one fd. Not copyable (msg
// points into it).
struct WordMessage {
  HelperWord w = {0, step_none};
  struct iovec iov;
  alignas(struct cmsghdr) char buf[CMSG_SPACE(sizeof(int))];
  struct msghdr msg;
  WordMessage() {
    std::memset(buf, 0, sizeof buf);
    std::memset(&msg, 0, sizeof msg);
    iov = {&w, sizeof w};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = buf;
    msg.msg_controllen = sizeof buf;
  }
  WordMessage(const WordMessage&) = delete;
  WordMessage& operator=(const WordMessage&) = delete;
};

// One word, with the namespace's fd attached when there is one.
int send_word(int sock, HelperWord w, int fd) {
  WordMessage m;
  m.w = w;
  struct msghdr& msg = m.msg;
  if (fd < 0) {
    msg.msg_control = nullptr;
    msg.msg_controllen = 0;
  } else {
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  long r = raw(SYS_sendmsg, sock, reinterpret_cast<long>(&msg), MSG_NOSIGNAL);
  return r < 0 ? static_cast<int>(-r) : 0;
}

int loopback_on(int s) {
  struct ifreq ifr;
  std::memset(&ifr, 0, sizeof ifr);
  std::memcpy(ifr.ifr_name, "lo", 3);
  long r = raw(SYS_ioctl, s, SIOCGIFFLAGS, reinterpret_cast<long>(&ifr));
  if (r == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    r = raw(SYS_ioctl, s, SIOCSIFFLAGS, reinterpret_cast<long>(&ifr));
  }
  return r < 0 ? static_cast<int>(-r) : 0;
}

// The helper process. Returns to the clone wrapper, which exits.
int netns_helper_main(void* arg) {
  const NetnsHelper& h = *static_cast<const NetnsHelper*>(arg);
  HelperWord w = {0, step_none};
  int nsfd = -1;
  long r = raw(SYS_setns, h.box_pidfd, CLONE_NEWUSER);
  if (r < 0) w = {static_cast<int>(-r), step_setns_user};
  if (w.err == 0 && (r = raw(SYS_unshare, CLONE_NEWNET)) < 0) w = {static_cast<int>(-r), step_unshare_net};
  if (w.err == 0) {
    long s = raw(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
      w = {static_cast<int>(-s), step_loopback};
    } else {
      int e = h.loopback_up ? loopback_on(static_cast<int>(s)) : 0;
      if (e != 0) w = {e, step_loopback};
      if (w.err == 0) {
        r = raw(SYS_ioctl, s, SIOCGSKNETNS, 0);
        if (r < 0) w = {static_cast<int>(-r), step_get_netns};
        else nsfd = static_cast<int>(r);
      }
      raw(SYS_close, s);
    }
  }
  // Nothing to do on a failed send: the launcher closes its end once this process is reaped, and
  // the box's first process then sees the end of the socket, which fails the box.
  (void)send_word(h.sock, w, nsfd);
  if (nsfd >= 0) raw(SYS_close, nsfd);
  return 0;
}

}  // namespace

bool netns_helper_supported() { return kRawSyscalls; }

int netns_helper_start(NetnsHelper& h) {
  // CLONE_VM and CLONE_FILES: nothing is copied. Not CLONE_FS and not CLONE_THREAD: joining a user
  // namespace needs a process of its own with its own fs context. No exit signal: the launcher
  // reaps it by pid (__WALL), and no SIGCHLD reaches its signal handling.
  pid_t pid = ::clone(netns_helper_main, h.stack + sizeof h.stack, CLONE_VM | CLONE_FILES, &h);
  if (pid < 0) return errno;
  h.pid = pid;
  return 0;
}

void netns_helper_finish(NetnsHelper& h) {
  if (h.pid <= 0) return;
  while (::waitpid(h.pid, nullptr, __WALL) < 0 && errno == EINTR) {
  }
  h.pid = -1;
}

int join_box_netns(int sock, const char** what) {
  WordMessage m;
  struct msghdr& msg = m.msg;
  const HelperWord& w = m.w;
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  *what = "recvmsg (network namespace helper)";
  if (n < 0) return errno;
  if (n != static_cast<ssize_t>(sizeof w)) return EPROTO;
  int fd = -1;
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c != nullptr && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  if (w.err != 0) {
    if (fd >= 0) ::close(fd);
    *what = step_what(w.step);
    return w.err;
  }
  if (fd < 0) return EPROTO;
  *what = "setns CLONE_NEWNET";
  int r = ::setns(fd, CLONE_NEWNET) == 0 ? 0 : errno;
  ::close(fd);
  return r;
}

int bring_loopback_up() {
  long s = raw(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return static_cast<int>(-s);
  int e = loopback_on(static_cast<int>(s));
  raw(SYS_close, s);
  return e;
}

}  // namespace kern
