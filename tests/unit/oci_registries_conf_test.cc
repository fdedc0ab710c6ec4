// registries.conf (oci/registries_conf.h): entries, mirrors in order with the prefix rewritten,
// digest-only and tag-only mirrors, blocked registries, wildcards, errors with file:line:col.
#include <gtest/gtest.h>

#include "oci/registries_conf.h"

namespace kern::oci {
namespace {

RegistriesConf conf_of(std::string_view text) {
  RegistriesConf c;
  Status st = parse_registries_conf(text, "registries.conf", c);
  EXPECT_TRUE(st) << (st ? "" : st.error().what());
  return c;
}

Reference ref_of(std::string_view text) {
  auto r = parse_reference(text);
  EXPECT_TRUE(r);
  return *r;
}

std::vector<std::string> names(const RegistriesConf& c, std::string_view ref) {
  auto eps = pull_endpoints(c, ref_of(ref));
  EXPECT_TRUE(eps) << (eps ? "" : eps.error().what());
  std::vector<std::string> out;
  if (eps)
    for (const auto& e : *eps) out.push_back((e.mirror ? "mirror " : "") + e.ref.str() + (e.insecure ? " insecure" : ""));
  return out;
}

TEST(OciRegistriesConf, MirrorsFirstInOrderThenTheRegistry) {
  auto c = conf_of(R"(
unqualified-search-registries = ["docker.io"]
[[registry]]
prefix = "docker.io"
location = "docker.io"
[[registry.mirror]]
location = "mirror.one:5000"
insecure = true
[[registry.mirror]]
location = "mirror.two/hub"
[aliases]
"bb" = "docker.io/library/busybox"
)");
  EXPECT_EQ(names(c, "busybox"),
            (std::vector<std::string>{"mirror mirror.one:5000/library/busybox:latest insecure",
                                      "mirror mirror.two/hub/library/busybox:latest", "docker.io/library/busybox:latest"}));
}

TEST(OciRegistriesConf, LocationRewritesThePrefixAndTheLongestPrefixWins) {
  auto c = conf_of(R"(
[[registry]]
prefix = "example.com/foo"
location = "internal.lan/bar"
[[registry]]
prefix = "example.com"
location = "other.lan"
)");
  EXPECT_EQ(names(c, "example.com/foo/img:1"), (std::vector<std::string>{"internal.lan/bar/img:1"}));
  EXPECT_EQ(names(c, "example.com/foobar/img:1"), (std::vector<std::string>{"other.lan/foobar/img:1"}));
  EXPECT_EQ(names(c, "quay.io/x/y:2"), (std::vector<std::string>{"quay.io/x/y:2"}));
}

TEST(OciRegistriesConf, DigestOnlyAndTagOnlyMirrors) {
  auto c = conf_of(R"(
[[registry]]
location = "r.example"
[[registry.mirror]]
location = "by-digest.example"
pull-from-mirror = "digest-only"
[[registry.mirror]]
location = "by-tag.example"
pull-from-mirror = "tag-only"
)");
  std::string digest = "@sha256:" + std::string(64, 'a');
  EXPECT_EQ(names(c, "r.example/a:1"), (std::vector<std::string>{"mirror by-tag.example/a:1", "r.example/a:1"}));
  EXPECT_EQ(names(c, "r.example/a" + digest),
            (std::vector<std::string>{"mirror by-digest.example/a" + digest, "r.example/a" + digest}));
  auto d = conf_of("[[registry]]\nlocation = \"r.example\"\nmirror-by-digest-only = true\n"
                   "[[registry.mirror]]\nlocation = \"m.example\"\n");
  EXPECT_EQ(names(d, "r.example/a:1"), (std::vector<std::string>{"r.example/a:1"}));
}

TEST(OciRegistriesConf, WildcardPrefixMatchesSubdomains) {
  auto c = conf_of(R"(
[[registry]]
prefix = "*.corp.example"
insecure = true
[[registry.mirror]]
location = "cache.lan"
)");
  EXPECT_EQ(names(c, "a.corp.example/team/img:1"),
            (std::vector<std::string>{"mirror cache.lan/team/img:1", "a.corp.example/team/img:1 insecure"}));
  EXPECT_EQ(names(c, "corp.example/team/img:1"), (std::vector<std::string>{"corp.example/team/img:1"}));
}

TEST(OciRegistriesConf, BlockedIsRefusedNamingTheFile) {
  auto c = conf_of("[[registry]]\nlocation = \"bad.example\"\nblocked = true\n");
  auto eps = pull_endpoints(c, ref_of("bad.example/x:1"));
  ASSERT_FALSE(eps);
  EXPECT_NE(eps.error().what().find("blocked by registries.conf"), std::string::npos) << eps.error().what();
}

TEST(OciRegistriesConf, LaterFileReplacesTheSamePrefix) {
  RegistriesConf c;
  ASSERT_TRUE(parse_registries_conf("[[registry]]\nlocation = \"r.example\"\ninsecure = true\n", "a.conf", c));
  ASSERT_TRUE(parse_registries_conf("[[registry]]\nlocation = \"r.example\"\n", "b.conf", c));
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_FALSE(c.entries[0].insecure);
  EXPECT_EQ(c.entries[0].file, "b.conf");
  EXPECT_FALSE(registry_insecure(c, "r.example"));
}

TEST(OciRegistriesConf, ErrorsNameLineAndColumn) {
  RegistriesConf c;
  auto st = parse_registries_conf("[[registry]]\nlocation = \"a\"\ninsecure = \"yes\"\n", "f.conf", c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("f.conf:3:"), std::string::npos) << st.error().what();
  EXPECT_NE(st.error().what().find("insecure"), std::string::npos);
  st = parse_registries_conf("[[registry]\n", "g.conf", c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("g.conf:1:"), std::string::npos) << st.error().what();
  st = parse_registries_conf("[[registry]]\ninsecure = true\n", "h.conf", c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("needs a prefix or a location"), std::string::npos);
  st = parse_registries_conf("[[registry]]\nlocation = \"a\"\n[[registry.mirror]]\ninsecure = true\n", "i.conf", c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("a mirror needs a location"), std::string::npos);
}

}  // namespace
}  // namespace kern::oci
