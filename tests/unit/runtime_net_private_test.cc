// --net private's pure part: -p/--dns/--add-host values, the DNS choice, the box's files and
// pasta's command line (runtime/net/private_net_plan.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/net/private_net_plan.h"

namespace kern::net {
namespace {

// The one entry of a -p that names one port.
PortPublish one(const char* text) {
  auto p = parse_publish(text);
  EXPECT_TRUE(p) << text << ": " << (p ? "" : p.error().what());
  EXPECT_EQ(p ? p->size() : 0u, 1u) << text;
  return p && !p->empty() ? p->front() : PortPublish{};
}

TEST(PrivateNetPublish, TheDockerSpellings) {
  PortPublish p = one("8080:80");
  EXPECT_EQ(p.host_ip, "");
  EXPECT_EQ(p.host_port, 8080);
  EXPECT_EQ(p.box_port, 80);
  EXPECT_FALSE(p.udp);
  p = one("127.0.0.1:18080:8080/tcp");
  EXPECT_EQ(p.host_ip, "127.0.0.1");
  EXPECT_EQ(p.host_port, 18080);
  p = one("[::1]:5353:53/udp");
  EXPECT_EQ(p.host_ip, "::1");
  EXPECT_TRUE(p.udp);
  EXPECT_EQ(p.box_port, 53);
  EXPECT_EQ(one("65535:1").host_port, 65535);
}

TEST(PrivateNetPublish, BoxPortAloneAndRanges) {
  // -p BOXPORT and IP::BOXPORT: host port 0, chosen when the box is made.
  PortPublish p = one("80");
  EXPECT_EQ(p.host_port, 0);
  EXPECT_EQ(p.box_port, 80);
  p = one("53/udp");
  EXPECT_TRUE(p.udp);
  p = one("127.0.0.1::80");
  EXPECT_EQ(p.host_ip, "127.0.0.1");
  EXPECT_EQ(p.host_port, 0);
  p = one("[::1]::80");
  EXPECT_EQ(p.host_ip, "::1");
  EXPECT_EQ(p.host_port, 0);
  auto r = parse_publish("8000-8002:9000-9002/udp");
  ASSERT_TRUE(r) << r.error().what();
  ASSERT_EQ(r->size(), 3u);
  for (unsigned k = 0; k < 3; ++k) {
    EXPECT_EQ((*r)[k].host_port, 8000 + k);
    EXPECT_EQ((*r)[k].box_port, 9000 + k);
    EXPECT_TRUE((*r)[k].udp);
  }
  r = parse_publish("7000-7001");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].box_port, 7001);
  EXPECT_EQ((*r)[1].host_port, 0);
  EXPECT_TRUE(parse_publish("1-1024"));
  EXPECT_FALSE(parse_publish("1-1025"));
}

TEST(PrivateNetPublish, BadValuesAreUsageErrorsWithAHint) {
  for (const char* bad : {"99999:80", "0:80", "8080:0", "8080:80/sctp", "a:80", "8080:80:90:1", "999.1.1.1:80:80",
                          "[::1:80:80", "::1:8080:80", "8000-8010:80", "8000-8001:80-82", "90-80", "", ":80", "80:",
                          "0", "8000-:80", "-8000:80"}) {
    auto p = parse_publish(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().kind(), ErrorKind::usage) << bad;
    EXPECT_NE(p.error().what().find("-p"), std::string::npos) << bad;
    EXPECT_FALSE(p.error().hint().empty()) << bad;
  }
  EXPECT_NE(parse_publish("99999:80").error().what().find("not a port"), std::string::npos);
}

TEST(PrivateNetPublish, AHostPortIsPublishedOnce) {
  auto list = [](std::vector<const char*> v) {
    std::vector<PortPublish> out;
    for (auto t : v) out.push_back(one(t));
    return out;
  };
  EXPECT_TRUE(check_publish_list(list({"8080:80", "8081:80", "8080:80/udp"})));
  EXPECT_TRUE(check_publish_list(list({"127.0.0.1:8080:80", "127.0.0.2:8080:80"})));
  EXPECT_FALSE(check_publish_list(list({"8080:80", "8080:81"})));
  EXPECT_FALSE(check_publish_list(list({"127.0.0.1:8080:80", "8080:81"})));
}

TEST(PrivateNetHosts, HostGateway) {
  auto h = parse_add_host("host.docker.internal:host-gateway");
  ASSERT_TRUE(h) << h.error().what();
  EXPECT_EQ(h->second, kHostGateway);
  const char* route =
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      "br0\t0000580A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
      "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";
  EXPECT_EQ(default_gateway_ipv4(route), "192.0.2.1");
  EXPECT_EQ(default_gateway_ipv4("Iface\tDestination\n"), "");
  // A default route without RTF_GATEWAY (an interface route) has no gateway.
  EXPECT_EQ(default_gateway_ipv4("h\neth0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n"), "");
  PrivateNet n;
  auto has = [](const std::vector<std::string>& a, const char* w) { return std::find(a.begin(), a.end(), w) != a.end(); };
  EXPECT_TRUE(has(pasta_argv(n, 1, 3), "--no-map-gw"));
  n.map_gateway = true;
  EXPECT_FALSE(has(pasta_argv(n, 1, 3), "--no-map-gw"));
}

TEST(PrivateNetHosts, AddHost) {
  auto h = parse_add_host("db.internal:10.0.0.5");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->first, "db.internal");
  EXPECT_EQ(h->second, "10.0.0.5");
  h = parse_add_host("v6=::1");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->second, "::1");
  h = parse_add_host("v6:[2001:db8::1]");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->second, "2001:db8::1");
  for (const char* bad : {"nocolon", "name:", ":10.0.0.1", "bad_name:10.0.0.1", "-x:10.0.0.1", "a b:1.2.3.4",
                          "name:not-an-ip", "name:1.2.3.4\n5.6.7.8 evil"}) {
    auto r = parse_add_host(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage);
    EXPECT_FALSE(r.error().hint().empty());
  }
}

TEST(PrivateNetDns, FlagsHostResolversOrTheForwarder) {
  EXPECT_EQ(*parse_dns("9.9.9.9"), "9.9.9.9");
  EXPECT_EQ(*parse_dns("2001:DB8::53"), "2001:db8::53");
  EXPECT_FALSE(parse_dns("dns.example"));
  HostResolv h = parse_host_resolv(
      "# generated\nnameserver 127.0.0.53\nnameserver 10.1.2.3 ; x\nnameserver ::1\nnameserver fe80::1%eth0\n"
      "nameserver 2001:db8::1\nsearch a.example b.example\noptions edns0 trust-ad\n");
  EXPECT_EQ(h.nameservers, (std::vector<std::string>{"10.1.2.3", "2001:db8::1"}));
  EXPECT_TRUE(h.had_loopback);
  EXPECT_EQ(h.search, (std::vector<std::string>{"a.example", "b.example"}));
  EXPECT_EQ(h.options, (std::vector<std::string>{"edns0", "trust-ad"}));

  PrivateNet n;
  choose_dns({"9.9.9.9"}, h, n);  // --dns wins; the host's search and options stay
  EXPECT_EQ(n.nameservers, (std::vector<std::string>{"9.9.9.9"}));
  EXPECT_EQ(n.dns_forward, "");
  EXPECT_EQ(resolv_conf_text(n), "# kern --net private\nnameserver 9.9.9.9\nsearch a.example b.example\n"
                                 "options edns0 trust-ad\n");
  choose_dns({}, h, n);
  EXPECT_EQ(n.nameservers, h.nameservers);
  EXPECT_EQ(n.dns_forward, "");
  // Only loopback resolvers (systemd-resolved): the box asks pasta's forwarder instead.
  choose_dns({}, parse_host_resolv("nameserver 127.0.0.53\n"), n);
  EXPECT_EQ(n.nameservers, (std::vector<std::string>{kDnsForwardAddress}));
  EXPECT_EQ(n.dns_forward, kDnsForwardAddress);
  choose_dns({}, parse_host_resolv(""), n);
  EXPECT_EQ(n.dns_forward, kDnsForwardAddress);
}

TEST(PrivateNetFiles, HostsAndHostname) {
  PrivateNet n;
  n.hosts = {{"db.internal", "10.0.0.5"}, {"v6", "::1"}};
  std::string t = hosts_text(n, "web");
  EXPECT_EQ(t.rfind("127.0.0.1\tlocalhost\n", 0), 0u);
  EXPECT_NE(t.find("127.0.1.1\tweb\n"), std::string::npos);
  EXPECT_NE(t.find("10.0.0.5\tdb.internal\n::1\tv6\n"), std::string::npos);
  EXPECT_EQ(hostname_text("web"), "web\n");
}

TEST(PrivateNetPasta, NothingOfTheHostsLoopbackAndOnlyThePublishedPorts) {
  PrivateNet n;
  auto a = pasta_argv(n, 4242, 9);
  auto has = [&](const std::string& opt, const std::string& val) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == opt && a[i + 1] == val) return true;
    return false;
  };
  EXPECT_EQ(a.front(), "pasta");
  EXPECT_EQ(a.back(), "4242");
  EXPECT_TRUE(has("-T", "none"));
  EXPECT_TRUE(has("-U", "none"));
  EXPECT_TRUE(has("-t", "none"));  // pasta's default would publish every port bound in the box
  EXPECT_TRUE(has("-u", "none"));
  EXPECT_TRUE(has("--pid", "/proc/self/fd/9"));
  EXPECT_NE(std::find(a.begin(), a.end(), "--no-map-gw"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "--config-net"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "--foreground"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--dns-forward"), a.end());

  n.publish = {one("127.0.0.1:18080:8080"), one("9000:90"), one("[::1]:53:5353/udp")};
  n.dns_forward = kDnsForwardAddress;
  a = pasta_argv(n, 1, 3);
  EXPECT_TRUE(has("-t", "127.0.0.1/18080:8080"));
  EXPECT_TRUE(has("-t", "9000:90"));
  EXPECT_TRUE(has("-u", "::1/53:5353"));
  EXPECT_FALSE(has("-t", "none"));
  EXPECT_FALSE(has("-u", "none"));
  EXPECT_TRUE(has("--dns-forward", kDnsForwardAddress));
}

TEST(PrivateNetMode, Names) {
  EXPECT_STREQ(net_mode_name(NetMode::none), "none");
  EXPECT_STREQ(net_mode_name(NetMode::host), "host");
  EXPECT_STREQ(net_mode_name(NetMode::private_net), "private");
}

}  // namespace
}  // namespace kern::net
