// --net private, the pure part: the -p/--dns/--add-host values, the box's /etc/resolv.conf,
// /etc/hosts and /etc/hostname texts, and pasta's command line. Reads no file and makes no call
// (the host's resolv.conf text is passed in), so all of it is unit-tested. Used by the spec
// builder (cli/net_flags.cc), the mount plan and runtime/net/private_net.cc.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::net {

// Where pasta answers DNS in the box when the host's own resolvers are loopback addresses
// (which the box cannot reach): a link-local address no network uses, as podman chooses.
inline constexpr const char* kDnsForwardAddress = "169.254.1.1";

// "none", "host", "private": for --plan, --show-config, the report and `kern inspect`.
const char* net_mode_name(NetMode mode);

// -p [IP:]HOSTPORT:BOXPORT[/tcp|udp]; an IPv6 IP is written in brackets ([::1]:8080:80). Ports
// may be ranges FIRST-LAST of the same length (one entry each); the host port may be left out
// (-p BOXPORT, -p IP::BOXPORT): its entries have host_port 0, a free port chosen when the box is
// made (assign_host_ports, port_check.h).
inline constexpr unsigned kMaxPublishRange = 1024;
Result<std::vector<PortPublish>> parse_publish(const std::string& text);
// --add-host NAME:IP (or NAME=IP): a host name and a literal IPv4/IPv6 address, or the word
// host-gateway (kHostGateway, kept as it is: the caller puts the gateway's address there).
inline constexpr const char* kHostGateway = "host-gateway";
Result<std::pair<std::string, std::string>> parse_add_host(const std::string& text);
// The IPv4 gateway of the host's default route, from /proc/net/route's text; "" when it has none.
std::string default_gateway_ipv4(const std::string& proc_net_route);
// --dns IP: a literal address, returned in its canonical spelling.
Result<std::string> parse_dns(const std::string& text);
// The -p list as a whole: no two entries on the same host address, port and protocol.
Status check_publish_list(const std::vector<PortPublish>& list);

// What the host's /etc/resolv.conf says, with loopback name servers left out (the box's
// loopback is its own).
struct HostResolv {
  std::vector<std::string> nameservers;
  std::vector<std::string> search;
  std::vector<std::string> options;
  bool had_loopback = false;  // a loopback name server was left out
};
HostResolv parse_host_resolv(const std::string& text);

// The box's DNS as Docker and podman choose it: --dns when given, else the host's name servers
// that are not loopback, else pasta's forwarder (kDnsForwardAddress); the host's search domains
// and options are kept.
void choose_dns(const std::vector<std::string>& dns_flags, const HostResolv& host, PrivateNet& out);

std::string resolv_conf_text(const PrivateNet& net);
// localhost lines, the box's own name on 127.0.1.1 (as Debian does: its address on pasta's
// interface is the host's and not known before it starts), then --add-host lines in order.
std::string hosts_text(const PrivateNet& net, const std::string& hostname);
std::string hostname_text(const std::string& hostname);

// pasta's arguments (argv[0] included) to connect the network namespace of `box_pid` (joining
// its user namespace), publish the -p ports and nothing else: no port of the host's loopback is
// reachable from the box (-T/-U none, --no-map-gw unless PrivateNet::map_gateway), and pasta writes its pid to /proc/self/fd/
// `ready_fd` once the box's interface is configured.
std::vector<std::string> pasta_argv(const PrivateNet& net, pid_t box_pid, int ready_fd);

}  // namespace kern::net
