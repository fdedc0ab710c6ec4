// The published ports' check; see port_check.h.
#include "runtime/net/port_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/sys/unique_fd.h"

namespace kern::net {
namespace {

// 0 when `ip` (v4 or v6 literal) and `port` could be bound, else the errno. `dual`: an IPv6
// socket that takes IPv4 as well (IPV6_V6ONLY off), which fails when either family's port is
// taken on any address.
int try_bind(const std::string& ip, uint16_t port, bool udp, bool dual, uint16_t* bound = nullptr) {
  sockaddr_storage ss{};
  socklen_t len;
  int family;
  if (auto* a4 = reinterpret_cast<sockaddr_in*>(&ss); ::inet_pton(AF_INET, ip.c_str(), &a4->sin_addr) == 1) {
    a4->sin_family = family = AF_INET;
    a4->sin_port = htons(port);
    len = sizeof *a4;
  } else {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (::inet_pton(AF_INET6, ip.c_str(), &a6->sin6_addr) != 1) return EINVAL;
    a6->sin6_family = family = AF_INET6;
    a6->sin6_port = htons(port);
    len = sizeof *a6;
  }
  UniqueFd s(::socket(family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0));
  if (!s) return errno;
  int one = 1, v6only = dual ? 0 : 1;
  // As pasta sets it for TCP (a connection of the port's last user in TIME_WAIT does not
  // count); for UDP it would let this bind share a port another socket holds, so it is off.
  if (!udp) (void)::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) (void)::setsockopt(s.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return errno;
  if (bound != nullptr) {
    if (::getsockname(s.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return errno;
    *bound = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                     : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  return 0;
}

std::string spelled(const PortPublish& p) {
  std::string ip = p.host_ip.find(':') != std::string::npos ? "[" + p.host_ip + "]" : p.host_ip;
  return (ip.empty() ? "" : ip + ":") + std::to_string(p.host_port) + ":" + std::to_string(p.box_port) +
         (p.udp ? "/udp" : "");
}

}  // namespace

Status assign_host_ports(std::vector<PortPublish>& list) {
  for (auto& p : list) {
    if (p.host_port != 0) continue;
    // The kernel's choice of a free ephemeral port, on the address pasta will bind; one that
    // another entry of the list already has is asked for again.
    for (int attempt = 0; attempt < 64 && p.host_port == 0; ++attempt) {
      uint16_t port = 0;
      std::string addr = p.host_ip.empty() ? "::" : p.host_ip;
      int err = try_bind(addr, 0, p.udp, p.host_ip.empty(), &port);
      if (err == EAFNOSUPPORT && p.host_ip.empty()) err = try_bind("0.0.0.0", 0, p.udp, false, &port);
      if (err != 0)
        return fail(Error(ErrorKind::setup, err, "--net private: -p " + std::to_string(p.box_port) +
                                                     ": bind " + (p.host_ip.empty() ? "[::]" : addr) + ":0 (a free host port)"));
      bool taken = false;
      for (const auto& q : list) taken |= &q != &p && q.udp == p.udp && q.host_port == port;
      if (!taken) p.host_port = port;
    }
    if (p.host_port == 0)
      return fail(ErrorKind::setup, 0, "--net private: -p " + std::to_string(p.box_port) + ": no free host port found");
  }
  return {};
}

Status check_ports_free(const std::vector<PortPublish>& list) {
  for (const auto& p : list) {
    std::string addr = p.host_ip;
    int err;
    if (addr.empty()) {
      addr = "::";
      err = try_bind(addr, p.host_port, p.udp, true);
      if (err == EAFNOSUPPORT) {  // a kernel without IPv6: every address is every IPv4 one
        addr = "0.0.0.0";
        err = try_bind(addr, p.host_port, p.udp, false);
      } else if (err == EADDRINUSE) {
        // Which family holds it, to name it: IPv4 (0.0.0.0 fails when any IPv4 address has the
        // port) or else IPv6.
        addr = try_bind("0.0.0.0", p.host_port, p.udp, false) != 0 ? "0.0.0.0" : "::";
      }
    } else {
      err = try_bind(addr, p.host_port, p.udp, false);
    }
    if (err == 0) continue;
    std::string where = (addr.find(':') != std::string::npos ? "[" + addr + "]" : addr) + ":" +
                        std::to_string(p.host_port) + (p.udp ? "/udp" : "/tcp");
    Error e(ErrorKind::setup, err, "--net private: -p " + spelled(p) + ": bind " + where);
    if (err == EADDRINUSE)
      e.with_hint(p.host_ip.empty() ? "another socket holds the port on " +
                                          std::string(addr == "::" ? "an IPv6" : "an IPv4") +
                                          " address of the host (ss -ltnup shows it); publish another host port, "
                                          "or only on an address where it is free (-p IP:HOSTPORT:BOXPORT)"
                                    : "another socket holds the port (ss -ltnup shows it); publish another host port");
    else if (err == EACCES)
      e.with_hint("a host port below net.ipv4.ip_unprivileged_port_start needs privilege; publish a higher one");
    else if (err == EADDRNOTAVAIL)
      e.with_hint("the address is not one of this host's");
    return fail(std::move(e));
  }
  return {};
}

}  // namespace kern::net
