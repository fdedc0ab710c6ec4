// The per-URL transport policy of the registry client (oci/url_policy.h): plain HTTP only to a
// loopback host, judged for each URL on its own.
#include <gtest/gtest.h>

#include "oci/url_policy.h"

namespace kern::oci {
namespace {

bool allowed(std::string_view url) { return static_cast<bool>(check_fetch_url(url, "the URL")); }

TEST(OciUrlPolicy, HttpsIsFetchedAnywhere) {
  EXPECT_TRUE(allowed("https://auth.docker.io/token?service=x"));
  EXPECT_TRUE(allowed("https://10.1.2.3:5000/v2/"));
  EXPECT_TRUE(allowed("HTTPS://Registry.Example/v2/"));
}

TEST(OciUrlPolicy, PlainHttpOnlyToLoopbackHosts) {
  EXPECT_TRUE(allowed("http://127.0.0.1:5000/v2/"));
  EXPECT_TRUE(allowed("http://127.9.8.7/token"));
  EXPECT_TRUE(allowed("http://localhost:5000/token"));
  EXPECT_TRUE(allowed("http://LOCALHOST/token"));
  EXPECT_TRUE(allowed("http://[::1]:5000/v2/"));
  EXPECT_TRUE(allowed("http://[::1]/v2/"));
}

TEST(OciUrlPolicy, PlainHttpRealmElsewhereIsRefusedAndNamed) {
  auto r = check_fetch_url("http://auth.example.com/token", "the token realm");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("refusing plain HTTP to the token realm \"http://auth.example.com/token\""),
            std::string::npos)
      << r.error().what();
  EXPECT_FALSE(allowed("http://10.254.0.1:8080/token"));
  EXPECT_FALSE(allowed("http://[::2]/token"));
  EXPECT_FALSE(allowed("http://[fe80::1]/token"));
}

TEST(OciUrlPolicy, LoopbackLookalikesAreNotLoopback) {
  EXPECT_FALSE(allowed("http://127.0.0.1.evil.io/token"));
  EXPECT_FALSE(allowed("http://localhost.evil.io/token"));
  EXPECT_FALSE(allowed("http://evil.io/127.0.0.1/token"));
  EXPECT_FALSE(allowed("http://evil.io?h=localhost"));
  EXPECT_FALSE(allowed("http://128.0.0.1/"));
  EXPECT_FALSE(allowed("http://127.0.0.256/"));
  EXPECT_FALSE(allowed("http://127.1/"));  // shorthand: not read as loopback
  EXPECT_FALSE(allowed("http://[::1]x/"));
}

TEST(OciUrlPolicy, UserInfoIsRefusedEvenToLoopback) {
  // "http://127.0.0.1@evil.io/" goes to evil.io; no URL with user info is fetched at all.
  EXPECT_FALSE(allowed("http://127.0.0.1@evil.io/"));
  EXPECT_FALSE(allowed("http://user:pass@127.0.0.1/"));
  EXPECT_FALSE(allowed("https://user:pass@registry.example/"));
}

TEST(OciUrlPolicy, OtherSchemesAndRelativeUrlsAreRefused) {
  EXPECT_FALSE(allowed("ftp://127.0.0.1/x"));
  EXPECT_FALSE(allowed("file:///etc/passwd"));
  EXPECT_FALSE(allowed("/token"));
  EXPECT_FALSE(allowed(""));
  EXPECT_FALSE(allowed("http://:80/"));
}

TEST(OciUrlPolicy, EachRedirectHopIsJudgedOnItsOwn) {
  // A loopback registry redirecting to a plain-HTTP host elsewhere: the hop is refused even
  // though the first URL was fine.
  EXPECT_TRUE(allowed("http://127.0.0.1:5000/v2/r/blobs/sha256:ab"));
  EXPECT_FALSE(allowed("http://blobs.example.com/sha256:ab"));
  EXPECT_TRUE(allowed("https://blobs.example.com/sha256:ab"));
}

TEST(OciUrlPolicy, SameOriginDecidesWhetherAuthorizationFollows) {
  EXPECT_TRUE(same_origin("https://r.example/v2/a", "https://r.example:443/v2/b"));
  EXPECT_TRUE(same_origin("http://127.0.0.1:5000/v2/", "http://127.0.0.1:5000/other"));
  EXPECT_FALSE(same_origin("https://r.example/v2/", "https://blobs.example/x"));
  EXPECT_FALSE(same_origin("https://r.example/v2/", "http://r.example/v2/"));
  EXPECT_FALSE(same_origin("http://127.0.0.1:5000/", "http://127.0.0.1:5001/"));
  EXPECT_FALSE(same_origin("https://r.example/", "not a url"));
}

TEST(OciUrlPolicy, SplitUrlReadsHostAndPort) {
  auto p = split_url("http://[::1]:5000/v2/");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scheme, "http");
  EXPECT_EQ(p->host, "::1");
  EXPECT_EQ(p->port, "5000");
  p = split_url("https://Quay.IO/v2/?x=1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->host, "quay.io");
  EXPECT_EQ(p->port, "443");
}

TEST(OciUrlPolicy, PlainHttpToTheInsecureRegistryOnlyAtItsOwnHostAndPort) {
  EXPECT_TRUE(check_fetch_url("http://registry.lan:5000/v2/", "the URL", "registry.lan:5000"));
  EXPECT_TRUE(check_fetch_url("http://Registry.LAN/v2/", "the URL", "registry.lan"));
  EXPECT_FALSE(check_fetch_url("http://registry.lan:5001/v2/", "the URL", "registry.lan:5000"));
  EXPECT_FALSE(check_fetch_url("http://registry.lan/v2/", "the URL", "registry.lan:5000"));
  EXPECT_FALSE(check_fetch_url("http://auth.lan/token", "the URL", "registry.lan"));
  EXPECT_FALSE(check_fetch_url("http://registry.lan/v2/", "the URL"));
}

}  // namespace
}  // namespace kern::oci
