// Image reference parsing (kern(1)).
#include <gtest/gtest.h>

#include "oci/reference.h"

namespace kern::oci {
namespace {

std::string norm(std::string_view s) {
  auto r = parse_reference(s, "/work");
  return r ? r->str() : "ERROR";
}

TEST(OciReference, DockerHubOnePartGetsLibraryAndLatest) {
  auto r = parse_reference("busybox");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->registry, "docker.io");
  EXPECT_EQ(r->repository, "library/busybox");
  EXPECT_EQ(r->tag, "latest");
  EXPECT_EQ(r->digest, "");
  EXPECT_EQ(r->str(), "docker.io/library/busybox:latest");
}

TEST(OciReference, DockerHubTwoPartsKeepsNamespace) {
  EXPECT_EQ(norm("user/app:1.2"), "docker.io/user/app:1.2");
  EXPECT_EQ(norm("docker.io/busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(norm("index.docker.io/library/busybox:1"), "docker.io/library/busybox:1");
}

TEST(OciReference, FirstComponentIsRegistryWithDotColonOrLocalhost) {
  EXPECT_EQ(norm("quay.io/a/b"), "quay.io/a/b:latest");
  EXPECT_EQ(norm("localhost/a"), "localhost/a:latest");
  EXPECT_EQ(norm("localhost:5000/a/b:t"), "localhost:5000/a/b:t");
  EXPECT_EQ(norm("127.0.0.1:5000/x"), "127.0.0.1:5000/x:latest");
  EXPECT_EQ(norm("[::1]:5000/x"), "[::1]:5000/x:latest");
  // No dot, no colon, not localhost: a Docker Hub namespace, not a registry.
  EXPECT_EQ(norm("myhost/x"), "docker.io/myhost/x:latest");
}

TEST(OciReference, DigestPinned) {
  std::string d = "sha256:" + std::string(64, 'a');
  auto r = parse_reference("alpine@" + d);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tag, "");
  EXPECT_EQ(r->digest, d);
  EXPECT_EQ(r->str(), "docker.io/library/alpine@" + d);
  EXPECT_EQ(norm("r.io:443/a:v1@" + d), "r.io:443/a:v1@" + d);
}

TEST(OciReference, Rejects) {
  for (const char* s : {"", "UPPER", "a//b", "a/", "/a", "a:", "a:-bad", "a@sha256:abc",
                        "a@md5:" "0123456789abcdef0123456789abcdef", "a__-b", "a..b",
                        "-a", "a-", "bad host.io:x/a", "a\nb", "a b",
                        // Hosts that name nothing: an empty or malformed IPv6 address, empty or
                        // dashed labels, a port out of range.
                        "[..]:80/x", "[]:80/x", "[]/x", "[:::::::::1]/x", "[1:2]/x", "[fe80::1%eth0]/x",
                        "[::1]:0/x", "[::1]:99999/x", "r..io/x", ".r.io/x", "r.io./x", "r.-io/x",
                        "r-.io/x", "r.io:0/x", "r.io:65536/x", "localhost:/x"}) {
    auto r = parse_reference(s);
    EXPECT_FALSE(r) << "accepted: " << s;
    if (!r) {
      EXPECT_EQ(r.error().kind(), ErrorKind::usage);
    }
  }
  EXPECT_FALSE(parse_reference("a:" + std::string(129, 'x')));
  EXPECT_FALSE(parse_reference(std::string(300, 'a')));
}

TEST(OciReference, AcceptsRealHosts) {
  EXPECT_EQ(norm("[::1]:5000/a"), "[::1]:5000/a:latest");
  EXPECT_EQ(norm("[2001:db8::7]/a/b:v"), "[2001:db8::7]/a/b:v");
  EXPECT_EQ(norm("my-reg.example.com:65535/a"), "my-reg.example.com:65535/a:latest");
  EXPECT_EQ(norm("localhost:1/a"), "localhost:1/a:latest");
}

TEST(OciReference, AcceptsSeparators) {
  EXPECT_EQ(norm("a_b__c-d---e/f.g"), "docker.io/a_b__c-d---e/f.g:latest");
  EXPECT_EQ(norm("a:V_1.0-rc"), "docker.io/library/a:V_1.0-rc");
}

TEST(OciReference, OciLayout) {
  EXPECT_EQ(norm("oci:/tmp/lay"), "oci:/tmp/lay");
  EXPECT_EQ(norm("oci:/tmp/lay:v2"), "oci:/tmp/lay:v2");
  EXPECT_EQ(norm("oci:rel/../lay:t"), "oci:/work/lay:t");
  EXPECT_EQ(norm("oci:./x"), "oci:/work/x");
  auto r = parse_reference("oci:/a:b/c");  // the colon belongs to the path
  ASSERT_TRUE(r);
  EXPECT_EQ(r->path, "/a:b/c");
  EXPECT_EQ(r->tag, "");
  EXPECT_FALSE(parse_reference("oci:"));
  EXPECT_FALSE(parse_reference("oci:/x:bad tag"));
}

TEST(OciReference, DockerArchive) {
  EXPECT_EQ(norm("docker-archive:img.tar"), "docker-archive:/work/img.tar");
  EXPECT_EQ(norm("docker-archive:/a/b:c.tar"), "docker-archive:/a/b:c.tar");
  EXPECT_FALSE(parse_reference("docker-archive:"));
}

TEST(OciReference, Loopback) {
  EXPECT_TRUE(parse_reference("localhost:5000/a")->loopback_registry());
  EXPECT_TRUE(parse_reference("127.0.0.1:5000/a")->loopback_registry());
  EXPECT_TRUE(parse_reference("127.1.2.3/a")->loopback_registry());
  EXPECT_TRUE(parse_reference("[::1]:5000/a")->loopback_registry());
  EXPECT_FALSE(parse_reference("127.0.0.1.evil.io/a")->loopback_registry());
  EXPECT_FALSE(parse_reference("localhost.evil.io/a")->loopback_registry());
  EXPECT_FALSE(parse_reference("busybox")->loopback_registry());
}

TEST(OciReference, CleanAbsolutePath) {
  EXPECT_EQ(clean_absolute_path("/a/./b//c/../d"), "/a/b/d");
  EXPECT_EQ(clean_absolute_path("/../.."), "/");
  EXPECT_EQ(clean_absolute_path("/"), "/");
}

}  // namespace
}  // namespace kern::oci
