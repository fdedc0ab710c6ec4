// The egress proxy's accept loop; see egress_helpers.h. Proxy process only (forked by the
// launcher); each connection is served in a child of it (egress_conn.cc).
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

#include "runtime/net/egress_helpers.h"
#include "runtime/report.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/fdio.h"

namespace kern::net {
namespace {

unsigned reap(unsigned live) {
  while (live > 0) {
    pid_t p = ::waitpid(-1, nullptr, WNOHANG);
    if (p <= 0) break;
    --live;
  }
  return live;
}

}  // namespace

void egress_proxy_main(const EgressPolicy& policy, const std::string& box_name, int unix_fd, int report_fd) {
  if (harden_helper() != 0) ::_exit(13);
  unsigned live = 0;
  pid_t self = ::getpid();
  for (;;) {
    struct pollfd p = {unix_fd, POLLIN, 0};
    int r = ::poll(&p, 1, 1000);
    live = reap(live);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) ::_exit(15);
    if (r == 0) continue;
    auto got = sys::recv_fd(unix_fd, "the egress relay");
    if (!got) ::_exit(0);  // the relay ended: so does the box's egress
    UniqueFd client = std::move(*got);
    if (live >= policy.limits.max_connections) {
      static const char busy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 50\r\nConnection: close\r\n\r\n"
          "kern egress proxy: too many connections at once \n";
      (void)sys::write_all_raw(client.get(), busy, sizeof busy - 1);
      EgressEvent ev;
      ev.reason = "too many connections at once";
      if (report_fd >= 0) write_report_line(report_fd, egress_record(box_name, ev));
      continue;
    }
    pid_t c = ::fork();
    if (c == 0) {
      // A connection ends with the proxy: killing the proxy cuts every tunnel (and the tunnel's
      // record is written: the launcher waits for it, see EgressHelpers::stop).
      end_connection_with_proxy();
      if (::getppid() != self) ::_exit(0);
      ::close(unix_fd);
      EgressEvent ev = serve_egress_connection(client.get(), policy);
      if (report_fd >= 0) write_report_line(report_fd, egress_record(box_name, ev));
      ::_exit(0);
    }
    if (c > 0) ++live;
  }
}

}  // namespace kern::net
