// --net private, the pure part; see private_net_plan.h. Launcher side (the spec builder and the
// launch plan), no calls but inet_pton/inet_ntop.
#include "runtime/net/private_net_plan.h"

#include <arpa/inet.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "runtime/sys/log.h"

namespace kern::net {
namespace {

Error bad(const std::string& flag, const std::string& text, const std::string& why, const std::string& hint) {
  return Error(ErrorKind::usage, 0, flag + " \"" + log::sanitize(text) + "\": " + why).with_hint(hint);
}

const char* kPublishHint =
    "write -p [IP:][HOSTPORT]:BOXPORT[/tcp|udp] or -p BOXPORT, ports or ranges FIRST-LAST, e.g. -p 8080:80, "
    "-p 127.0.0.1:8080:80/tcp, -p 8000-8009:9000-9009, -p 80 (a free host port)";

// A decimal port 1..65535, nothing else.
bool port_of(const std::string& s, uint16_t* out) {
  if (s.empty() || s.size() > 5) return false;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v == 0 || v > 65535) return false;
  *out = static_cast<uint16_t>(v);
  return true;
}

// The canonical spelling of a literal address, or "" when `s` is not one.
std::string canonical_ip(const std::string& s) {
  unsigned char buf[16];
  char out[INET6_ADDRSTRLEN];
  if (::inet_pton(AF_INET, s.c_str(), buf) == 1) return ::inet_ntop(AF_INET, buf, out, sizeof out);
  if (::inet_pton(AF_INET6, s.c_str(), buf) == 1) return ::inet_ntop(AF_INET6, buf, out, sizeof out);
  return "";
}

bool is_loopback(const std::string& ip) {
  unsigned char buf[16];
  if (::inet_pton(AF_INET, ip.c_str(), buf) == 1) return buf[0] == 127;
  if (::inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
    for (int i = 0; i < 15; ++i)
      if (buf[i] != 0) return false;
    return buf[15] == 1;
  }
  return false;
}

// RFC 1123 host names (labels of letters, digits and '-', dot-separated), as /etc/hosts takes.
bool valid_host_name(const std::string& n) {
  if (n.empty() || n.size() > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    if (c == '.') {
      if (label == 0 || n[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && label > 0)) return false;
    if (++label > 63) return false;
  }
  return n.back() != '-';
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

}  // namespace

const char* net_mode_name(NetMode mode) {
  switch (mode) {
    case NetMode::none: return "none";
    case NetMode::host: return "host";
    case NetMode::private_net: return "private";
  }
  return "?";
}

Result<std::vector<PortPublish>> parse_publish(const std::string& text) {
  PortPublish p;
  std::string rest = text;
  size_t slash = rest.rfind('/');
  if (slash != std::string::npos) {
    std::string proto = rest.substr(slash + 1);
    if (proto == "udp") p.udp = true;
    else if (proto != "tcp")
      return fail(bad("-p", text, "the protocol is tcp or udp", kPublishHint));
    rest.resize(slash);
  }
  // What is left: [IP:][HOSTPORTS]:BOXPORTS, or BOXPORTS alone (a host port kern chooses).
  std::string host_ports, box_ports;
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      return fail(bad("-p", text, "an IPv6 address is written [ADDR]:HOSTPORT:BOXPORT", kPublishHint));
    std::string ip = rest.substr(1, close - 1);
    unsigned char buf[16];
    if (::inet_pton(AF_INET6, ip.c_str(), buf) != 1)
      return fail(bad("-p", text, "\"" + log::sanitize(ip) + "\" is not an IPv6 address", kPublishHint));
    p.host_ip = canonical_ip(ip);
    rest = rest.substr(close + 2);
    size_t colon = rest.find(':');
    if (colon == std::string::npos || rest.find(':', colon + 1) != std::string::npos)
      return fail(bad("-p", text, "needs a host port (or none: [ADDR]::BOXPORT) and a box port", kPublishHint));
    host_ports = rest.substr(0, colon);
    box_ports = rest.substr(colon + 1);
  } else {
    size_t colons = 0;
    for (char c : rest) colons += c == ':';
    if (colons == 2) {
      size_t first = rest.find(':');
      std::string ip = rest.substr(0, first);
      unsigned char buf[4];
      if (::inet_pton(AF_INET, ip.c_str(), buf) != 1)
        return fail(bad("-p", text, "\"" + log::sanitize(ip) + "\" is not an IPv4 address",
                        "an IPv6 address goes in brackets: -p [::1]:8080:80"));
      p.host_ip = canonical_ip(ip);
      rest = rest.substr(first + 1);
    } else if (colons > 2) {
      return fail(bad("-p", text, "needs a host port and a box port", kPublishHint));
    }
    size_t colon = rest.find(':');
    if (colon == std::string::npos) {
      box_ports = rest;  // -p BOXPORT: any free host port
    } else {
      host_ports = rest.substr(0, colon);
      box_ports = rest.substr(colon + 1);
      if (host_ports.empty() && p.host_ip.empty())
        return fail(bad("-p", text, "an empty host port needs an address (IP::BOXPORT); or give the box port alone",
                        kPublishHint));
    }
  }
  // A port or a range FIRST-LAST of them.
  auto range = [&](const std::string& r, const char* which, uint16_t* lo, uint16_t* hi) -> Status {
    size_t dash = r.find('-');
    std::string a = r.substr(0, dash), b = dash == std::string::npos ? a : r.substr(dash + 1);
    if (!port_of(a, lo) || !port_of(b, hi))
      return fail(bad("-p", text, std::string("the ") + which + " \"" + log::sanitize(r) + "\" is not a port (1-65535) or a range FIRST-LAST",
                      kPublishHint));
    if (*hi < *lo) return fail(bad("-p", text, std::string("the ") + which + " range ends before it starts", kPublishHint));
    return {};
  };
  uint16_t box_lo = 0, box_hi = 0, host_lo = 0, host_hi = 0;
  KERN_TRY(range(box_ports, "box port", &box_lo, &box_hi));
  const unsigned count = static_cast<unsigned>(box_hi - box_lo) + 1;
  if (count > kMaxPublishRange)
    return fail(bad("-p", text, "a range of " + std::to_string(count) + " ports; at most " +
                                    std::to_string(kMaxPublishRange) + " in one -p",
                    "split it into several -p"));
  if (!host_ports.empty()) {
    KERN_TRY(range(host_ports, "host port", &host_lo, &host_hi));
    if (static_cast<unsigned>(host_hi - host_lo) + 1 != count)
      return fail(bad("-p", text, "the host range and the box range have different lengths",
                      "give ranges of the same length (-p 8000-8009:9000-9009), or the box's alone (-p 9000-9009)"));
  }
  std::vector<PortPublish> out;
  for (unsigned k = 0; k < count; ++k) {
    PortPublish q = p;
    q.box_port = static_cast<uint16_t>(box_lo + k);
    q.host_port = host_ports.empty() ? 0 : static_cast<uint16_t>(host_lo + k);  // 0: kern chooses
    out.push_back(q);
  }
  return out;
}

Status check_publish_list(const std::vector<PortPublish>& list) {
  for (size_t i = 0; i < list.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const auto& a = list[i];
      const auto& b = list[j];
      bool overlap = a.udp == b.udp && a.host_port == b.host_port &&
                     (a.host_ip.empty() || b.host_ip.empty() || a.host_ip == b.host_ip);
      if (overlap)
        return fail(Error(ErrorKind::usage, 0,
                          "-p: host port " + std::to_string(a.host_port) + (a.udp ? "/udp" : "/tcp") +
                              " is published twice")
                        .with_hint("each host address and port takes one -p"));
    }
  return {};
}

Result<std::pair<std::string, std::string>> parse_add_host(const std::string& text) {
  const char* hint = "write --add-host NAME:IP, e.g. --add-host db.internal:10.0.0.5 (or NAME:host-gateway)";
  size_t sep = text.find_first_of(":=");
  if (sep == std::string::npos) return fail(bad("--add-host", text, "needs NAME:IP", hint));
  std::string name = text.substr(0, sep), ip = text.substr(sep + 1);
  if (ip.size() > 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  if (!valid_host_name(name))
    return fail(bad("--add-host", text, "\"" + log::sanitize(name) + "\" is not a host name", hint));
  if (ip == kHostGateway) return std::make_pair(name, ip);
  std::string c = canonical_ip(ip);
  if (c.empty()) return fail(bad("--add-host", text, "\"" + log::sanitize(ip) + "\" is not an IP address", hint));
  return std::make_pair(name, c);
}

std::string default_gateway_ipv4(const std::string& proc_net_route) {
  std::istringstream in(proc_net_route);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<std::string> w = words(line);
    // Iface Destination Gateway Flags ... Mask: a default route is destination 0, mask 0, with
    // RTF_UP and RTF_GATEWAY; the addresses are the kernel's bytes in hex, first byte last.
    if (w.size() < 8 || w[1] != "00000000" || w[7] != "00000000") continue;
    unsigned long flags = std::strtoul(w[3].c_str(), nullptr, 16);
    if ((flags & 0x3) != 0x3 || w[2].size() != 8) continue;
    unsigned long g = std::strtoul(w[2].c_str(), nullptr, 16);
    return std::to_string(g & 0xff) + "." + std::to_string((g >> 8) & 0xff) + "." + std::to_string((g >> 16) & 0xff) +
           "." + std::to_string((g >> 24) & 0xff);
  }
  return "";
}

Result<std::string> parse_dns(const std::string& text) {
  std::string c = canonical_ip(text);
  if (c.empty())
    return fail(bad("--dns", text, "is not an IP address", "write --dns 192.0.2.53 (one address per --dns)"));
  return c;
}

HostResolv parse_host_resolv(const std::string& text) {
  HostResolv r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t hash = line.find_first_of("#;");
    if (hash != std::string::npos) line.resize(hash);
    auto w = words(line);
    if (w.empty()) continue;
    if (w[0] == "nameserver" && w.size() >= 2) {
      std::string ip = w[1];
      size_t zone = ip.find('%');  // fe80::1%eth0: a link of the host's, not the box's
      if (zone != std::string::npos) continue;
      std::string c = canonical_ip(ip);
      if (c.empty()) continue;
      if (is_loopback(c)) r.had_loopback = true;
      else r.nameservers.push_back(c);
    } else if ((w[0] == "search" || w[0] == "domain") && w.size() >= 2) {
      // The last search or domain line wins, as the resolver reads them.
      r.search.assign(w.begin() + 1, w.end());
    } else if (w[0] == "options") {
      r.options.insert(r.options.end(), w.begin() + 1, w.end());
    }
  }
  return r;
}

void choose_dns(const std::vector<std::string>& dns_flags, const HostResolv& host, PrivateNet& out) {
  out.search = host.search;
  out.options = host.options;
  out.dns_forward.clear();
  if (!dns_flags.empty()) {
    out.nameservers = dns_flags;
  } else if (!host.nameservers.empty()) {
    out.nameservers = host.nameservers;
  } else {
    out.nameservers = {kDnsForwardAddress};
    out.dns_forward = kDnsForwardAddress;
  }
}

std::string resolv_conf_text(const PrivateNet& net) {
  std::string s = "# kern --net private\n";
  for (const auto& n : net.nameservers) s += "nameserver " + n + "\n";
  if (!net.search.empty()) {
    s += "search";
    for (const auto& d : net.search) s += " " + d;
    s += "\n";
  }
  if (!net.options.empty()) {
    s += "options";
    for (const auto& o : net.options) s += " " + o;
    s += "\n";
  }
  return s;
}

std::string hosts_text(const PrivateNet& net, const std::string& hostname) {
  std::string s =
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\n"
      "ff00::0\tip6-mcastprefix\n"
      "ff02::1\tip6-allnodes\n"
      "ff02::2\tip6-allrouters\n";
  if (!hostname.empty()) s += "127.0.1.1\t" + hostname + "\n";
  for (const auto& [name, ip] : net.hosts) s += ip + "\t" + name + "\n";
  return s;
}

std::string hostname_text(const std::string& hostname) { return hostname + "\n"; }

std::vector<std::string> pasta_argv(const PrivateNet& net, pid_t box_pid, int ready_fd) {
  // Nothing of the host's loopback: no port forwarded from the box to it, and the gateway
  // address is not mapped to it unless --add-host NAME:host-gateway asked for that.
  std::vector<std::string> a = {"pasta", "--stderr", "--foreground", "--quiet", "--config-net",
                                "-T", "none", "-U", "none"};
  if (!net.map_gateway) a.push_back("--no-map-gw");
  std::vector<std::string> tcp, udp;
  for (const auto& p : net.publish) {
    std::string spec = (p.host_ip.empty() ? "" : p.host_ip + "/") + std::to_string(p.host_port) + ":" +
                       std::to_string(p.box_port);
    (p.udp ? udp : tcp).push_back(spec);
  }
  // pasta's default for each is "auto" (every port bound in the box): always explicit.
  if (tcp.empty()) tcp.push_back("none");
  if (udp.empty()) udp.push_back("none");
  for (const auto& t : tcp) a.insert(a.end(), {"-t", t});
  for (const auto& u : udp) a.insert(a.end(), {"-u", u});
  if (!net.dns_forward.empty()) a.insert(a.end(), {"--dns-forward", net.dns_forward});
  a.insert(a.end(), {"--pid", "/proc/self/fd/" + std::to_string(ready_fd)});
  a.push_back(std::to_string(box_pid));
  return a;
}

}  // namespace kern::net
