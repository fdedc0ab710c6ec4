// The egress allowlist's pure decisions (runtime/net/egress_rules.h): names, IP literals in every
// spelling a resolver accepts, domain matching, and the address classes the proxy refuses.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <string>

#include "runtime/net/egress_rules.h"

namespace kern::net {
namespace {

std::optional<std::string> v4(const char* text) {
  sockaddr_in sa {};
  sa.sin_family = AF_INET;
  EXPECT_EQ(inet_pton(AF_INET, text, &sa.sin_addr), 1) << text;
  return address_refusal(reinterpret_cast<sockaddr*>(&sa), sizeof sa);
}

std::optional<std::string> v6(const char* text) {
  sockaddr_in6 sa {};
  sa.sin6_family = AF_INET6;
  EXPECT_EQ(inet_pton(AF_INET6, text, &sa.sin6_addr), 1) << text;
  return address_refusal(reinterpret_cast<sockaddr*>(&sa), sizeof sa);
}

TEST(NetRules, IpLiteralsInEverySpelling) {
  for (const char* s : {"1.2.3.4", "127.0.0.1", "127.1", "0x7f.1", "0x7f000001", "2130706433", "017700000001",
                        "1.2.3.4.", "::1", "[::1]", "[2001:db8::1]", "::ffff:127.0.0.1", "1.2.3.999", "a.b.123"})
    EXPECT_TRUE(is_ip_literal(s)) << s;
  for (const char* s : {"pypi.org", "1password.com", "0x7f.example", "a1.b2", "files.pypi.org."})
    EXPECT_FALSE(is_ip_literal(s)) << s;
}

TEST(NetRules, CanonicalHostLowercasesAndDropsOneTrailingDot) {
  EXPECT_EQ(canonical_host("PyPI.Org."), "pypi.org");
  EXPECT_EQ(canonical_host("files.pypi.org"), "files.pypi.org");
  EXPECT_EQ(canonical_host("a-b.c-d.org"), "a-b.c-d.org");
}

TEST(NetRules, CanonicalHostRefusesWhatIsNotAName) {
  for (const char* s : {"", ".", "org", "pypi.org..", ".pypi.org", "py pi.org", "*.pypi.org", "_x.pypi.org",
                        "-a.org", "a-.org", "pypi.org:443", "user@pypi.org", "pypi.org/x", "127.0.0.1", "[::1]",
                        "caf\xc3\xa9.org", "a\tb.org"})
    EXPECT_FALSE(canonical_host(s).has_value()) << s;
  EXPECT_FALSE(canonical_host(std::string("pypi.org\0evil.com", 17)).has_value());
  std::string label63(63, 'a'), label64(64, 'a');
  EXPECT_TRUE(canonical_host(label63 + ".org").has_value());
  EXPECT_FALSE(canonical_host(label64 + ".org").has_value());
  std::string long_name;
  while (long_name.size() < 250) long_name += "abcdefgh.";
  EXPECT_FALSE(canonical_host(long_name + "org").has_value());
}

TEST(NetRules, ParseAllowListSplitsCommasDropsDuplicatesAndCanonicalises) {
  auto r = parse_egress_allow({"PyPI.org,files.pythonhosted.org", "pypi.org"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, (std::vector<std::string>{"pypi.org", "files.pythonhosted.org"}));
}

TEST(NetRules, ParseAllowListRefusesAddressesWildcardsAndEmptyItems) {
  for (const char* s : {"1.2.3.4", "pypi.org,,x.org", ",pypi.org", "pypi.org,", "*.pypi.org", "localhost", "::1",
                        "pypi.org:443", "http://pypi.org"}) {
    auto r = parse_egress_allow({s});
    EXPECT_FALSE(r.has_value()) << s;
    if (!r) {
      EXPECT_EQ(r.error().kind(), ErrorKind::usage) << s;
    }
  }
}

TEST(NetRules, DomainMatchIsExactOrSubdomainOnly) {
  std::vector<std::string> allow = {"pypi.org", "example.com"};
  EXPECT_TRUE(domain_allowed("pypi.org", allow));
  EXPECT_TRUE(domain_allowed("files.pypi.org", allow));
  EXPECT_TRUE(domain_allowed("a.b.example.com", allow));
  for (const char* s : {"evilpypi.org", "pypi.org.evil.com", "pypi.or", "ypi.org", "org", "xexample.com",
                        "example.com.au", "pypi.org.", ".pypi.org"})
    EXPECT_FALSE(domain_allowed(s, allow)) << s;
  EXPECT_FALSE(domain_allowed("pypi.org", {}));
}

TEST(NetRules, PublicUnicastIsAllowed) {
  for (const char* s : {"1.1.1.1", "8.8.8.8", "11.0.0.1", "151.101.0.223", "100.63.255.255", "100.128.0.0",
                        "172.15.255.255", "172.32.0.0", "192.167.255.255", "198.17.255.255", "223.255.255.255"})
    EXPECT_EQ(v4(s), std::nullopt) << s;
  for (const char* s : {"2606:4700::1111", "2a04:4e42::223", "2001:4860:4860::8888"}) EXPECT_EQ(v6(s), std::nullopt) << s;
}

TEST(NetRules, SpecialIpv4RangesAreRefused) {
  for (const char* s : {"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.255",
                        "127.0.0.1", "127.255.255.254", "169.254.169.254", "169.254.0.1", "172.16.0.1",
                        "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1",
                        "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250",
                        "240.0.0.1", "255.255.255.255"})
    EXPECT_NE(v4(s), std::nullopt) << s;
  EXPECT_NE(v4("169.254.169.254")->find("metadata"), std::string::npos);
}

TEST(NetRules, SpecialIpv6RangesAreRefused) {
  for (const char* s : {"::", "::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1",
                        "::ffff:8.8.8.8", "::127.0.0.1", "::ffff:0:10.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::1",
                        "100::1", "2001::1", "2001:2::1", "2001:db8::1", "2002:7f00:1::1", "3fff::1", "5f00::1",
                        "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1", "4000::1", "::2"})
    EXPECT_NE(v6(s), std::nullopt) << s;
  EXPECT_NE(v6("::ffff:127.0.0.1")->find("loopback"), std::string::npos);
}

TEST(NetRules, OtherFamiliesAndShortAddressesAreRefused) {
  sockaddr_in sa {};
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, "8.8.8.8", &sa.sin_addr);
  EXPECT_NE(address_refusal(reinterpret_cast<sockaddr*>(&sa), 4), std::nullopt);
  sockaddr un {};
  un.sa_family = AF_UNIX;
  EXPECT_NE(address_refusal(&un, sizeof un), std::nullopt);
  EXPECT_NE(address_refusal(nullptr, 0), std::nullopt);
}

TEST(NetRules, OnlyPorts80And443) {
  EXPECT_TRUE(egress_port_allowed(80));
  EXPECT_TRUE(egress_port_allowed(443));
  for (unsigned p : {0u, 22u, 25u, 53u, 8080u, 8443u, 65535u}) EXPECT_FALSE(egress_port_allowed(p)) << p;
}

}  // namespace
}  // namespace kern::net
