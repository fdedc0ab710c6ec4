// One proxied connection; see egress_conn.h. Proxy connection process only.
#include "runtime/net/egress_conn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "runtime/net/egress_rules.h"
#include "runtime/net/http_head.h"
#include "runtime/net/tls_sni.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/unique_fd.h"

namespace kern::net {
namespace {

volatile sig_atomic_t g_proxy_ended = 0;

void on_proxy_end(int) { g_proxy_ended = 1; }

int64_t now_ms() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits until `fd` is readable or `deadline` (monotonic ms) passes; false on timeout or error.
bool wait_readable(int fd, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - now_ms();
    if (left <= 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

bool send_all(int fd, const void* data, size_t len) {
  return sys::write_all_raw(fd, data, len) == 0;
}

void reply(int client, int code, const std::string& reason_phrase, const std::string& why) {
  std::string body = "kern egress proxy: " + why + "\n";
  std::string r = "HTTP/1.1 " + std::to_string(code) + " " + reason_phrase + "\r\nContent-Type: text/plain\r\n" +
                  "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  (void)send_all(client, r.data(), r.size());
}

std::string address_text(const struct sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
  else if (sa->sa_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
  return buf;
}

struct Resolved {
  std::vector<std::pair<sockaddr_storage, socklen_t>> addrs;
  std::string refusal;
};

// Resolves `host` itself and refuses the name when any address it resolves to is not public
// unicast: a name that points into the host's own networks is never reached, whichever of its
// addresses a client would have tried.
Resolved resolve(const std::string& host, unsigned port) {
  Resolved out;
  struct addrinfo hints {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  struct addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    out.refusal = std::string("cannot resolve the name (") + ::gai_strerror(rc) + ")";
    return out;
  }
  for (struct addrinfo* ai = res; ai; ai = ai->ai_next) {
    if (auto why = address_refusal(ai->ai_addr, ai->ai_addrlen)) {
      out.refusal = "resolves to " + address_text(ai->ai_addr) + ", " + *why;
      out.addrs.clear();
      break;
    }
    sockaddr_storage ss {};
    std::memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    out.addrs.emplace_back(ss, ai->ai_addrlen);
  }
  ::freeaddrinfo(res);
  if (out.addrs.empty() && out.refusal.empty()) out.refusal = "the name has no address";
  return out;
}

UniqueFd connect_one(const sockaddr_storage& ss, socklen_t len, unsigned timeout_ms) {
  // Judged again at the point of use: nothing reaches connect() that the rules refuse.
  if (address_refusal(reinterpret_cast<const sockaddr*>(&ss), len)) return {};
  UniqueFd s(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s) return {};
  int r = ::connect(s.get(), reinterpret_cast<const sockaddr*>(&ss), len);
  if (r < 0 && errno != EINPROGRESS) return {};
  if (r < 0) {
    struct pollfd p = {s.get(), POLLOUT, 0};
    int pr;
    do pr = ::poll(&p, 1, static_cast<int>(timeout_ms));
    while (pr < 0 && errno == EINTR);
    int err = 0;
    socklen_t el = sizeof err;
    if (pr <= 0 || ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) return {};
  }
  int flags = ::fcntl(s.get(), F_GETFL);
  ::fcntl(s.get(), F_SETFL, flags & ~O_NONBLOCK);
  return s;
}

void set_send_timeout(int fd, unsigned ms) {
  struct timeval tv = {static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// Copies both ways until both directions have ended or nothing moved for `idle_ms`.
// `client_budget`: how many more bytes the client may send (plain HTTP: the body), or -1.
std::string splice(int client, int server, EgressEvent& ev, unsigned idle_ms, long long client_budget) {
  set_send_timeout(client, idle_ms);
  set_send_timeout(server, idle_ms);
  bool c_open = client_budget != 0, s_open = true;
  char buf[16384];
  while (c_open || s_open) {
    struct pollfd p[2] = {{client, static_cast<short>(c_open ? POLLIN : 0), 0},
                          {server, static_cast<short>(s_open ? POLLIN : 0), 0}};
    int r = ::poll(p, 2, static_cast<int>(idle_ms));
    if (g_proxy_ended) return "the egress proxy ended";
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return "poll failed";
    if (r == 0) return "idle timeout";
    if (c_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      size_t want = sizeof buf;
      if (client_budget > 0 && static_cast<unsigned long long>(client_budget) < want) want = static_cast<size_t>(client_budget);
      ssize_t n = ::read(client, buf, want);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        c_open = false;
        ::shutdown(server, SHUT_WR);
      } else {
        if (!send_all(server, buf, static_cast<size_t>(n))) return "server write failed";
        ev.bytes_out += static_cast<uint64_t>(n);
        if (client_budget > 0 && (client_budget -= n) == 0) c_open = false;
      }
    }
    if (s_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = ::read(server, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        s_open = false;
        ::shutdown(client, SHUT_WR);
        // A plain request ends with the response; a tunnel's client may still be sending.
        if (client_budget >= 0) c_open = false;
      } else {
        if (!send_all(client, buf, static_cast<size_t>(n))) return "client write failed";
        ev.bytes_in += static_cast<uint64_t>(n);
      }
    }
  }
  return "closed";
}

EgressEvent refused(EgressEvent ev, int client, const std::string& why, bool can_reply = true) {
  ev.allowed = false;
  ev.reason = why;
  if (can_reply) reply(client, 403, "Forbidden", why);
  return ev;
}

}  // namespace

void end_connection_with_proxy() {
  // No SA_RESTART: a blocked poll returns EINTR and the copy loop sees the flag.
  struct sigaction sa {};
  sa.sa_handler = on_proxy_end;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_UNBLOCK, &term, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
}

EgressEvent serve_egress_connection(int client, const EgressPolicy& policy) {
  EgressEvent ev;
  const EgressLimits& lim = policy.limits;
  int64_t deadline = now_ms() + lim.head_timeout_ms;
  std::string buf;
  size_t head_end = 0;
  char chunk[4096];
  while ((head_end = find_head_end(buf)) == 0) {
    if (buf.size() >= kMaxRequestHead) return refused(ev, client, "request head larger than 16 KiB");
    if (!wait_readable(client, deadline)) return refused(ev, client, "no complete request head in time");
    ssize_t n = ::read(client, chunk, std::min(sizeof chunk, kMaxRequestHead - buf.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return refused(ev, client, "the client closed before a request head", false);
    buf.append(chunk, static_cast<size_t>(n));
  }
  HeadResult hr = parse_request_head(std::string_view(buf).substr(0, head_end));
  if (!hr.head) return refused(ev, client, hr.refusal);
  const HttpHead& h = *hr.head;
  ev.method = h.method;
  ev.host = h.host;
  ev.port = h.port;
  std::string rest = buf.substr(head_end);

  if (is_ip_literal(h.host)) return refused(ev, client, "an IP address never matches the allowlist");
  std::optional<std::string> host = canonical_host(h.host);
  if (!host) return refused(ev, client, "not a valid host name");
  if (!egress_port_allowed(h.port)) return refused(ev, client, "port " + std::to_string(h.port) + " is not 80 or 443");
  if (!domain_allowed(*host, policy.allow)) return refused(ev, client, "host not in the allowlist");
  Resolved rv = resolve(*host, h.port);
  if (!rv.refusal.empty()) return refused(ev, client, rv.refusal);

  if (h.connect) {
    if (!rest.empty()) return refused(ev, client, "bytes sent before the tunnel was established");
    const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (!send_all(client, ok, sizeof ok - 1)) return refused(ev, client, "the client went away", false);
    // The tunnel is open: from here a refusal can only close it.
    SniResult sni;
    std::vector<uint8_t> hello;
    while ((sni = parse_client_hello_sni(hello)).status == SniStatus::need_more) {
      if (hello.size() >= kMaxClientHelloRecord || !wait_readable(client, deadline))
        return refused(ev, client, "no TLS ClientHello in time", false);
      ssize_t n = ::read(client, chunk, std::min(sizeof chunk, kMaxClientHelloRecord - hello.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return refused(ev, client, "the client closed before its TLS ClientHello", false);
      hello.insert(hello.end(), chunk, chunk + n);
    }
    if (sni.status != SniStatus::ok) return refused(ev, client, sni_status_name(sni.status), false);
    std::optional<std::string> sni_host = canonical_host(sni.name);
    if (!sni_host || *sni_host != *host)
      return refused(ev, client, "TLS server name differs from the CONNECT host", false);
    rest.assign(hello.begin(), hello.end());
  }

  UniqueFd server;
  for (const auto& [ss, len] : rv.addrs) {
    server = connect_one(ss, len, lim.connect_timeout_ms);
    if (server) {
      ev.address = address_text(reinterpret_cast<const sockaddr*>(&ss));
      break;
    }
  }
  if (!server) {
    ev.reason = "could not connect to any address of the name";
    if (!h.connect) reply(client, 502, "Bad Gateway", ev.reason);
    return ev;  // allowed by the rules, but not reached
  }
  ev.allowed = true;
  long long budget = -1;
  std::string out = rest;
  if (!h.connect) {
    out = forwarded_head(h);
    unsigned long long body = h.content_length.value_or(0);
    if (rest.size() > body) rest.resize(body);  // a pipelined second request is never sent
    out += rest;
    budget = static_cast<long long>(body - rest.size());
  }
  if (!out.empty()) {
    if (!send_all(server.get(), out.data(), out.size())) {
      ev.reason = "server write failed";
      return ev;
    }
    ev.bytes_out += out.size();
  }
  ev.reason = splice(client, server.get(), ev, lim.idle_timeout_ms, budget);
  return ev;
}

}  // namespace kern::net
