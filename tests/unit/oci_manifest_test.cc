// Manifest, index and config parsing; registry auth pieces.
#include <gtest/gtest.h>

#include "oci/auth.h"
#include "oci/manifest.h"

namespace kern::oci {
namespace {

const std::string kD1 = "sha256:" + std::string(64, '1');
const std::string kD2 = "sha256:" + std::string(64, '2');

TEST(OciManifest, ParsesOciManifest) {
  std::string body = R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
    "config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" + kD1 + R"(","size":10},
    "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":")" + kD2 + R"(","size":5}]})";
  EXPECT_EQ(*manifest_kind(body), ManifestKind::manifest);
  auto m = parse_manifest(body);
  ASSERT_TRUE(m) << m.error().what();
  EXPECT_EQ(m->config.digest, kD1);
  ASSERT_EQ(m->layers.size(), 1u);
  EXPECT_EQ(m->layers[0].size, 5);
}

TEST(OciManifest, RefusesWhatItDoesNotKnow) {
  std::string foreign = R"({"schemaVersion":2,"config":{"digest":")" + kD1 + R"("},
    "layers":[{"mediaType":"application/vnd.example.weird","digest":")" + kD2 + R"("}]})";
  EXPECT_FALSE(parse_manifest(foreign));
  EXPECT_FALSE(manifest_kind(R"({"schemaVersion":1,"fsLayers":[]})"));
  EXPECT_FALSE(manifest_kind(R"({"mediaType":"text/html"})"));
  EXPECT_FALSE(manifest_kind("not json"));
  EXPECT_FALSE(parse_manifest(R"({"config":{"digest":"sha256:xyz"},"layers":[]})"));
  EXPECT_FALSE(parse_manifest(R"({"config":{"digest":")" + kD1 + R"(","size":-1},"layers":[]})"));
}

TEST(OciManifest, KindFromContentTypeOrShape) {
  EXPECT_EQ(*manifest_kind(R"({"manifests":[]})", "application/vnd.docker.distribution.manifest.list.v2+json"),
            ManifestKind::index);
  EXPECT_EQ(*manifest_kind(R"({"manifests":[]})"), ManifestKind::index);
  EXPECT_EQ(*manifest_kind(R"({"layers":[]})", "application/json; charset=utf-8"), ManifestKind::manifest);
}

TEST(OciManifest, ChoosesHostPlatform) {
  std::string body = R"({"manifests":[
    {"digest":")" + kD1 + R"(","platform":{"os":"linux","architecture":"arm64","variant":"v8"}},
    {"digest":")" + kD2 + R"(","platform":{"os":"linux","architecture":"amd64"}}]})";
  auto idx = parse_index(body);
  ASSERT_TRUE(idx);
  EXPECT_EQ(choose_platform(*idx, "amd64")->digest, kD2);
  EXPECT_EQ(choose_platform(*idx, "arm64")->digest, kD1);
  auto none = choose_platform(*idx, "s390x");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().what().find("linux/arm64/v8"), std::string::npos);
}

TEST(OciManifest, ImageConfig) {
  auto c = parse_image_config(R"({"os":"linux","architecture":"amd64","config":{"Entrypoint":["/e"],
    "Cmd":null,"Env":["A=1","PATH=/bin"],"WorkingDir":"/w","User":"1000:1000"},
    "rootfs":{"type":"layers","diff_ids":[")" + kD1 + R"("]}})");
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->config.entrypoint, std::vector<std::string>{"/e"});
  EXPECT_TRUE(c->config.cmd.empty());
  EXPECT_EQ(c->config.env.size(), 2u);
  EXPECT_EQ(c->config.working_dir, "/w");
  EXPECT_EQ(c->config.user, "1000:1000");
  EXPECT_EQ(c->diff_ids.size(), 1u);
  EXPECT_FALSE(parse_image_config(R"({"config":{"Cmd":"sh"}})"));
  EXPECT_FALSE(parse_image_config(R"({"rootfs":{"diff_ids":["md5:x"]}})"));
}

TEST(OciAuth, ParsesBearerChallenge) {
  auto c = parse_www_authenticate(
      R"(Bearer realm="https://auth.example.io/token",service="registry.example.io",scope="repository:a/b:pull,push")");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->scheme, "bearer");
  EXPECT_EQ(c->params["realm"], "https://auth.example.io/token");
  EXPECT_EQ(c->params["service"], "registry.example.io");
  EXPECT_EQ(c->params["scope"], "repository:a/b:pull,push");
  auto b = parse_www_authenticate(R"(Basic realm="Registry Realm")");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->scheme, "basic");
  EXPECT_EQ(b->params["realm"], "Registry Realm");
  EXPECT_FALSE(parse_www_authenticate(R"(Bearer realm="open)"));
  EXPECT_FALSE(parse_www_authenticate(""));
}

TEST(OciAuth, Base64RoundTrip) {
  EXPECT_EQ(base64_encode("user:pass"), "dXNlcjpwYXNz");
  EXPECT_EQ(base64_encode("a"), "YQ==");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  for (std::string s : {"", "a", "ab", "abc", "user:p@ss:word\xff"}) EXPECT_EQ(*base64_decode(base64_encode(s)), s);
  EXPECT_FALSE(base64_decode("a!=="));
  EXPECT_FALSE(base64_decode("abc"));
}

}  // namespace
}  // namespace kern::oci
