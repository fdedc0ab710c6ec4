// The network flags; see net_flags.h.
#include "cli/net_flags.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "cli/env_file.h"
#include "runtime/net/egress.h"
#include "runtime/net/egress_rules.h"
#include "runtime/net/port_check.h"
#include "runtime/net/private_net_plan.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

Status build_private_net(const NetOptions& o, BoxSpec& spec, const BoxClient& client) {
  if (!client.own_network)
    return fail(Error(ErrorKind::usage, 0, client.name + " --net private: not implemented yet")
                    .with_hint("a warm kernel's box has --net none; run a service with kern box --net private"));
  if (!o.egress_allow.empty())
    return fail(Error(ErrorKind::usage, 0, "--egress-allow: the box would have a network of its own as well")
                    .with_hint("--egress-allow keeps the box loopback-only; drop --net private"));
  PrivateNet& n = spec.private_net;
  for (const auto& p : o.publish) {
    KERN_TRY_ASSIGN(std::vector<PortPublish> pp, net::parse_publish(p));
    n.publish.insert(n.publish.end(), pp.begin(), pp.end());
  }
  // The ports given first, so that a port kern chooses is none of them.
  std::vector<PortPublish> given;
  for (const auto& p : n.publish)
    if (p.host_port != 0) given.push_back(p);
  KERN_TRY(net::check_publish_list(given));
  KERN_TRY(net::assign_host_ports(n.publish));
  std::vector<std::string> dns;
  for (const auto& d : o.dns) {
    KERN_TRY_ASSIGN(std::string ip, net::parse_dns(d));
    dns.push_back(ip);
  }
  for (const auto& h : o.add_host) {
    KERN_TRY_ASSIGN(auto entry, net::parse_add_host(h));
    if (entry.second == net::kHostGateway) {
      // The gateway's address, which pasta then maps to the host's loopback (PrivateNet::map_gateway).
      auto route = sys::read_file(AT_FDCWD, "/proc/net/route", 1 << 20);
      std::string gw = route ? net::default_gateway_ipv4(*route) : "";
      if (gw.empty())
        return fail(Error(ErrorKind::host_unsupported, 0,
                          "--add-host " + log::sanitize(h) + ": the host has no IPv4 default route, whose gateway "
                                                             "address pasta maps to the host")
                        .with_hint("give the host's address yourself: --add-host NAME:IP"));
      entry.second = gw;
      n.map_gateway = true;
    }
    n.hosts.push_back(entry);
  }
  // The host's resolvers, as pasta itself reads them; no file is no resolver.
  auto text = sys::read_file(AT_FDCWD, "/etc/resolv.conf", 1 << 16);
  net::choose_dns(dns, net::parse_host_resolv(text ? *text : std::string()), n);
  n.pasta = find_on_path("pasta");
  if (n.pasta.empty())
    return fail(Error(ErrorKind::host_unsupported, ENOENT, "--net private needs pasta, which is not on $PATH")
                    .with_hint("install Debian's passt package (apt-get install passt)"));
  // pasta would fail later with "Failed to open tun socket in namespace".
  if (std::string tun = tun_problem(); !tun.empty())
    return fail(Error(ErrorKind::host_unsupported, 0, "--net private needs /dev/net/tun: " + tun).with_hint(tun_fix()));
  return {};
}

}  // namespace

std::string find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find(':', pos);
    if (next == std::string::npos) next = path.size();
    std::string dir = path.substr(pos, next - pos);
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    pos = next + 1;
  }
  return "";
}

std::string tun_problem() {
  // Opened as pasta opens it in the box's user namespace, where the device's owner (the host's
  // root) is not mapped: only its mode counts, as for this user here.
  int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return "";
  }
  return "open \"/dev/net/tun\": " + errno_words(errno);
}

std::string tun_fix() {
  return "as root: chmod 0666 /dev/net/tun (what Debian's udev rule does at each boot; a host without udev, "
         "such as a container or a minimal VM, needs it after each boot), or where it is missing: "
         "mkdir -p /dev/net && mknod -m 0666 /dev/net/tun c 10 200 (modprobe tun first if the kernel has it "
         "as a module); ./setup.sh deps does this";
}

void add_net_flags(CLI::App* c, NetOptions& o, const FlagFilter& f) {
  one_value(add_option(c, f, "--egress-allow", o.egress_allow,
                       "D1[,D2...]: outbound HTTP(S) only to these domains and their subdomains, through kern's proxy"));
  one_value(add_option(c, f, "-p,--publish", o.publish, "[IP:]HOSTPORT:BOXPORT[/tcp|udp] (--net private)"));
  one_value(add_option(c, f, "--dns", o.dns, "name server for the box (--net private)"));
  one_value(add_option(c, f, "--add-host", o.add_host, "NAME:IP line for the box's /etc/hosts (--net private)"));
}

Result<NetMode> parse_net_mode(const std::string& word) {
  if (word.empty() || word == "host") return NetMode::host;
  if (word == "none") return NetMode::none;
  if (word == "private") return NetMode::private_net;
  return fail(Error(ErrorKind::usage, 0, "--net: \"" + log::sanitize(word) + "\" is not none, host or private")
                  .with_hint("a bare --net means host; put it after the box name, or write --net host"));
}

Result<void> build_net(const NetOptions& o, BoxSpec& spec, const BoxClient& client) {
  if (spec.net == NetMode::private_net) return build_private_net(o, spec, client);
  for (const auto& [flag, v] : {std::pair{"-p", &o.publish}, {"--dns", &o.dns}, {"--add-host", &o.add_host}})
    if (!v->empty())
      return fail(Error(ErrorKind::usage, 0, std::string(flag) + ": only a box with --net private has a network to set it on")
                      .with_hint("add --net private (the default --net none has loopback only)"));
  if (spec.net == NetMode::host) {
    // The host's own files, read as kern's caller may: missing or unreadable is none.
    auto hosts = sys::read_file(AT_FDCWD, "/etc/hosts", 1 << 20);
    auto resolv = sys::read_file(AT_FDCWD, "/etc/resolv.conf", 1 << 16);
    spec.host_name_files = BoxSpec::HostNameFiles{hosts ? *hosts : "", resolv ? *resolv : ""};
  }
  if (o.egress_allow.empty()) return {};
  if (!client.own_network) return fail(ErrorKind::usage, 0, client.name + " --egress-allow: not implemented yet");
  if (spec.net == NetMode::host)
    return fail(Error(ErrorKind::usage, 0, "--egress-allow: the box would have the host's network as well")
                    .with_hint("--egress-allow keeps the box loopback-only; drop --net host"));
  KERN_TRY_ASSIGN(spec.egress_allow, net::parse_egress_allow(o.egress_allow));
  return {};
}

void add_net_env(BoxSpec& spec) {
  if (!spec.egress_allow.empty()) merge_env(spec.env, net::egress_proxy_env());
}

}  // namespace kern::cli
