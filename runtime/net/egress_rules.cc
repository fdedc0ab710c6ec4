// The egress allowlist's decisions; see egress_rules.h. Pure: runs in whichever process calls it.
#include "runtime/net/egress_rules.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "runtime/sys/log.h"

namespace kern::net {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One IPv4 CIDR test on host-order bits.
bool in4(uint32_t a, uint32_t net, int bits) {
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (a & mask) == (net & mask);
}

bool prefix6(const unsigned char a[16], std::initializer_list<unsigned char> p, int bits) {
  unsigned char want[16] = {};
  size_t i = 0;
  for (unsigned char b : p) want[i++] = b;
  for (int b = 0; b < bits; ++b) {
    int byte = b / 8, bit = 7 - b % 8;
    if (((a[byte] >> bit) & 1) != ((want[byte] >> bit) & 1)) return false;
  }
  return true;
}

}  // namespace

bool is_ip_literal(std::string_view host) {
  if (host.empty()) return false;
  if (host.find(':') != std::string_view::npos || host.front() == '[') return true;
  std::string h(host);
  if (!h.empty() && h.back() == '.') h.pop_back();
  struct in_addr a4;
  if (::inet_aton(h.c_str(), &a4) != 0) return true;
  // A name whose last label is numeric is either an address spelling inet_aton did not take or
  // no name at all; hex labels such as "0x7f" are caught by inet_aton above.
  size_t dot = h.rfind('.');
  std::string_view last = dot == std::string::npos ? std::string_view(h) : std::string_view(h).substr(dot + 1);
  return all_digits(last);
}

std::optional<std::string> canonical_host(std::string_view host) {
  if (host.empty() || host.size() > 254) return std::nullopt;
  std::string h;
  h.reserve(host.size());
  for (char c : host) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    h.push_back(c);
  }
  if (h.back() == '.') h.pop_back();
  if (h.empty() || h.size() > 253) return std::nullopt;
  if (is_ip_literal(h)) return std::nullopt;
  size_t labels = 0, start = 0;
  for (;;) {
    size_t dot = h.find('.', start);
    std::string_view label = std::string_view(h).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return std::nullopt;
    for (char c : label)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return std::nullopt;
    ++labels;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (labels < 2) return std::nullopt;
  return h;
}

Result<std::vector<std::string>> parse_egress_allow(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    size_t start = 0;
    for (;;) {
      size_t comma = v.find(',', start);
      std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty())
        return fail(ErrorKind::usage, 0, "--egress-allow: an empty domain in \"" + log::sanitize(v) + "\"");
      if (is_ip_literal(item))
        return fail(Error(ErrorKind::usage, 0, "--egress-allow: \"" + log::sanitize(item) + "\" is an address, not a domain")
                        .with_hint("the allowlist names domains only; addresses are never reachable through it"));
      std::optional<std::string> c = canonical_host(item);
      if (!c)
        return fail(Error(ErrorKind::usage, 0, "--egress-allow: \"" + log::sanitize(item) + "\" is not a domain name")
                        .with_hint("write a name such as pypi.org; it also allows its subdomains (no wildcards)"));
      if (std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

bool domain_allowed(std::string_view host, const std::vector<std::string>& allow) {
  for (const auto& d : allow) {
    if (host == d) return true;
    if (host.size() > d.size() + 1 && host.ends_with(d) && host[host.size() - d.size() - 1] == '.') return true;
  }
  return false;
}

std::optional<std::string> ipv4_refusal(const unsigned char b[4]) {
  uint32_t a = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  struct Range {
    uint32_t net;
    int bits;
    const char* why;
  };
  static constexpr Range kRanges[] = {
      {0x00000000, 8, "this-network (0.0.0.0/8)"},
      {0x0A000000, 8, "private (10.0.0.0/8)"},
      {0x64400000, 10, "shared/CGNAT (100.64.0.0/10)"},
      {0x7F000000, 8, "loopback (127.0.0.0/8)"},
      {0xA9FE0000, 16, "link-local/metadata (169.254.0.0/16)"},
      {0xAC100000, 12, "private (172.16.0.0/12)"},
      {0xC0000000, 24, "IETF protocol assignments (192.0.0.0/24)"},
      {0xC0000200, 24, "documentation (192.0.2.0/24)"},
      {0xC0586300, 24, "6to4 relay anycast (192.88.99.0/24)"},
      {0xC0A80000, 16, "private (192.168.0.0/16)"},
      {0xC6120000, 15, "benchmarking (198.18.0.0/15)"},
      {0xC6336400, 24, "documentation (198.51.100.0/24)"},
      {0xCB007100, 24, "documentation (203.0.113.0/24)"},
      {0xE0000000, 4, "multicast (224.0.0.0/4)"},
      {0xF0000000, 4, "reserved (240.0.0.0/4)"},
  };
  for (const auto& r : kRanges)
    if (in4(a, r.net, r.bits)) return std::string(r.why);
  return std::nullopt;
}

std::optional<std::string> ipv6_refusal(const unsigned char a[16]) {
  static const unsigned char zero[16] = {};
  if (std::memcmp(a, zero, 16) == 0) return "unspecified (::)";
  if (std::memcmp(a, zero, 15) == 0 && a[15] == 1) return "loopback (::1)";
  // Forms that carry an IPv4 address: judged as that address, and refused whatever it is when the
  // form is one a host would translate locally.
  if (prefix6(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96)) {
    if (auto why = ipv4_refusal(a + 12)) return "IPv4-mapped " + *why;
    return "IPv4-mapped (::ffff:0:0/96)";
  }
  if (prefix6(a, {}, 96)) return "IPv4-compatible (::/96)";
  if (prefix6(a, {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, 96)) return "IPv4-translated (::ffff:0:0:0/96)";
  if (prefix6(a, {0, 0x64, 0xff, 0x9b}, 96)) return "NAT64 (64:ff9b::/96)";
  if (prefix6(a, {0, 0x64, 0xff, 0x9b, 0, 1}, 48)) return "NAT64 local-use (64:ff9b:1::/48)";
  if (prefix6(a, {0x01, 0x00}, 64)) return "discard-only (100::/64)";
  if (prefix6(a, {0x20, 0x01, 0x0d, 0xb8}, 32)) return "documentation (2001:db8::/32)";
  if (prefix6(a, {0x20, 0x01}, 23)) return "IETF special purpose (2001::/23)";
  if (prefix6(a, {0x20, 0x02}, 16)) return "6to4 (2002::/16)";
  if (prefix6(a, {0x3f, 0xff}, 20)) return "documentation (3fff::/20)";
  if (prefix6(a, {0x5f, 0x00}, 16)) return "segment routing (5f00::/16)";
  if (prefix6(a, {0xfc}, 7)) return "unique local (fc00::/7)";
  if (prefix6(a, {0xfe, 0x80}, 10)) return "link-local (fe80::/10)";
  if (prefix6(a, {0xfe, 0xc0}, 10)) return "site-local (fec0::/10)";
  if (prefix6(a, {0xff}, 8)) return "multicast (ff00::/8)";
  if (!prefix6(a, {0x20}, 3)) return "not global unicast (outside 2000::/3)";
  return std::nullopt;
}

std::optional<std::string> address_refusal(const struct sockaddr* sa, socklen_t len) {
  if (sa == nullptr) return "no address";
  if (sa->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    const auto* s4 = reinterpret_cast<const sockaddr_in*>(sa);
    return ipv4_refusal(reinterpret_cast<const unsigned char*>(&s4->sin_addr));
  }
  if (sa->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
    return ipv6_refusal(s6->sin6_addr.s6_addr);
  }
  return "not an IPv4 or IPv6 address";
}

}  // namespace kern::net
