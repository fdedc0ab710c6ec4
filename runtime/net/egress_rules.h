// The egress allowlist's decisions, as pure functions (no I/O): which host names a box may reach
// through the filtering proxy, and which resolved addresses the proxy may connect to. Used by the
// CLI (to check --egress-allow) and by the proxy process (runtime/net/egress_proxy.cc).
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::net {

// The only ports the proxy connects to.
inline bool egress_port_allowed(unsigned port) { return port == 80 || port == 443; }

// True when `host` is, or could be read by a resolver as, an address rather than a name:
// dotted IPv4 in any inet_aton spelling ("127.1", "0x7f.0.0.1", "2130706433"), IPv6 with or
// without brackets, or a name whose last label is all digits (no top-level domain is numeric).
bool is_ip_literal(std::string_view host);

// A host name in canonical form: lower case, one trailing dot removed, labels of [a-z0-9-]
// (1..63 bytes, no leading or trailing '-'), at most 253 bytes, at least two labels. nullopt for
// anything else (an IP literal, '*', '_', a space, a NUL, an empty label, non-ASCII).
std::optional<std::string> canonical_host(std::string_view host);

// Parses one --egress-allow value ("a.org,b.com"; repeatable flags are joined by the caller).
// Every entry must be a canonical-able name and not an IP literal; duplicates are dropped.
Result<std::vector<std::string>> parse_egress_allow(const std::vector<std::string>& values);

// True when the canonical `host` equals a listed domain or ends with "." + a listed domain.
// Listed domains are canonical (from parse_egress_allow). Nothing else matches.
bool domain_allowed(std::string_view host, const std::vector<std::string>& allow);

// Why the proxy must not connect to this address, or nullopt for a public unicast address.
// IPv4: 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.88.99/24,
// 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4, 240/4 (incl. broadcast).
// IPv6: ::, ::1, IPv4-mapped/compatible/translated forms (judged as the IPv4 inside), 64:ff9b::/96
// and 64:ff9b:1::/48 (NAT64), 100::/64, 2001::/23 (IETF special, incl. Teredo and benchmarking),
// 2001:db8::/32, 2002::/16 (6to4), 3fff::/20, 5f00::/16, fc00::/7, fe80::/10, fec0::/10, ff00::/8;
// anything outside 2000::/3 (not global unicast). Any other family is refused.
std::optional<std::string> address_refusal(const struct sockaddr* sa, socklen_t len);

// The same for raw address bytes (4 for IPv4, 16 for IPv6).
std::optional<std::string> ipv4_refusal(const unsigned char a[4]);
std::optional<std::string> ipv6_refusal(const unsigned char a[16]);

}  // namespace kern::net
