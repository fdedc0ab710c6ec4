// The egress relay; see egress_helpers.h. Relay process only (forked by the launcher).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "runtime/net/egress_helpers.h"
#include "runtime/sys/fd_passing.h"

namespace kern::net {

void egress_relay_main(int box_pidfd, uint16_t port, int unix_fd, int ready_fd) {
  // Entering the box's user namespace first is what gives the right to join its network
  // namespace; one setns on the pidfd does both atomically.
  if (::setns(box_pidfd, CLONE_NEWUSER | CLONE_NEWNET) != 0) ::_exit(10);
  ::close(box_pidfd);
  int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ls < 0) ::_exit(11);
  int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Box init brings loopback up after this runs; FREEBIND lets the bind precede it.
  ::setsockopt(ls, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
  struct sockaddr_in sa {};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(ls, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(ls, 128) != 0) ::_exit(12);
  if (harden_helper() != 0) ::_exit(13);
  char ok = 'R';
  if (::write(ready_fd, &ok, 1) != 1) ::_exit(14);
  ::close(ready_fd);
  for (;;) {
    struct pollfd p[2] = {{ls, POLLIN, 0}, {unix_fd, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      ::_exit(15);
    }
    // The proxy never writes to the relay: readable means it closed (or died).
    if (p[1].revents) ::_exit(0);
    if (!(p[0].revents & POLLIN)) continue;
    int c = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    int err = sys::send_fd_raw(unix_fd, c);
    ::close(c);
    if (err != 0) ::_exit(0);
  }
}

}  // namespace kern::net
