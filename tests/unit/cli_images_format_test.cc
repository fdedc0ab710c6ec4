// kern images' pure parts (cli/images_format.h): Docker's relative times and sizes, RFC 3339
// parsing, the reference filter, and the --format template subset.
#include <gtest/gtest.h>

#include "cli/images_format.h"

namespace kern::cli {
namespace {

ImageRow row(const std::string& ref) {
  oci::ImageRecord r;
  r.ref = ref;
  r.digest = "sha256:" + std::string(64, 'a');
  r.config_digest = "sha256:0123456789ab" + std::string(52, 'c');
  r.created = "2024-01-01T00:00:00Z";
  r.size = 7812345;
  return image_row(r);
}

TEST(ImagesFormat, IdIsTheConfigDigest) {
  EXPECT_EQ(row("docker.io/library/busybox:latest").id, "0123456789ab");
  EXPECT_EQ(row("docker.io/library/busybox:latest").repository, "docker.io/library/busybox");
  EXPECT_EQ(row("docker.io/library/busybox:latest").tag, "latest");
  EXPECT_EQ(row("").repository, "<none>");
}

TEST(ImagesFormat, Rfc3339) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:10Z"), 10);
  EXPECT_EQ(parse_rfc3339("2024-01-01T00:00:00.999999999Z"), 1704067200);
  EXPECT_EQ(parse_rfc3339("2024-01-01T02:00:00+02:00"), 1704067200);
  EXPECT_EQ(parse_rfc3339("2024-01-01T00:00:00"), -1);
  EXPECT_EQ(parse_rfc3339(""), -1);
  EXPECT_EQ(parse_rfc3339("2024-13-01T00:00:00Z"), -1);
}

TEST(ImagesFormat, CreatedSinceAsDockerSaysIt) {
  const std::string t = "2024-01-01T00:00:00Z";
  const std::time_t base = 1704067200;
  EXPECT_EQ(created_since(t, base), "Less than a second ago");
  EXPECT_EQ(created_since(t, base + 1), "1 second ago");
  EXPECT_EQ(created_since(t, base + 59), "59 seconds ago");
  EXPECT_EQ(created_since(t, base + 60), "About a minute ago");
  EXPECT_EQ(created_since(t, base + 45 * 60), "45 minutes ago");
  EXPECT_EQ(created_since(t, base + 3600), "About an hour ago");
  EXPECT_EQ(created_since(t, base + 5 * 3600), "5 hours ago");
  EXPECT_EQ(created_since(t, base + 3 * 86400), "3 days ago");
  EXPECT_EQ(created_since(t, base + 20 * 86400), "2 weeks ago");
  EXPECT_EQ(created_since(t, base + 90 * 86400), "3 months ago");
  EXPECT_EQ(created_since(t, base + 3 * 366 * 86400), "3 years ago");
  EXPECT_EQ(created_since("", base), "N/A");
}

TEST(ImagesFormat, HumanSize) {
  EXPECT_EQ(human_size(0), "0B");
  EXPECT_EQ(human_size(999), "999B");
  EXPECT_EQ(human_size(7812345), "7.81MB");
  EXPECT_EQ(human_size(123456789), "123MB");
  EXPECT_EQ(human_size(1500000000), "1.5GB");
}

TEST(ImagesFormat, ReferenceFilter) {
  ImageRow bb = row("docker.io/library/busybox:1.36"), reg = row("localhost:5000/team/app:v1");
  EXPECT_TRUE(reference_matches(bb, "busybox"));
  EXPECT_TRUE(reference_matches(bb, "busybox:1.36"));
  EXPECT_FALSE(reference_matches(bb, "busybox:1.37"));
  EXPECT_TRUE(reference_matches(bb, "docker.io/library/busybox"));
  EXPECT_TRUE(reference_matches(bb, "bus*"));
  EXPECT_FALSE(reference_matches(bb, "*box/x"));
  EXPECT_TRUE(reference_matches(reg, "localhost:5000/team/app"));
  EXPECT_TRUE(reference_matches(reg, "localhost:5000/*/app:v*"));
  EXPECT_FALSE(reference_matches(reg, "app"));  // '*' and names do not cross '/'
  EXPECT_FALSE(reference_matches(row(""), "*"));
}

TEST(ImagesFormat, TemplateLinesTableAndJson) {
  std::vector<ImageRow> rows = {row("docker.io/library/busybox:latest")};
  auto lines = parse_image_format("{{.Repository}}:{{ .Tag }} {{.ID}}\\t{{.Size}}");
  ASSERT_TRUE(lines);
  EXPECT_EQ(*render_images(rows, &*lines, 0), "docker.io/library/busybox:latest 0123456789ab\t7.81MB\n");
  auto table = parse_image_format("table {{.ID}}\\t{{.Tag}}");
  ASSERT_TRUE(table);
  EXPECT_EQ(*render_images(rows, &*table, 0), "IMAGE ID       TAG\n0123456789ab   latest\n");
  auto json = parse_image_format("json");
  ASSERT_TRUE(json);
  EXPECT_NE(render_images(rows, &*json, 0)->find("\"ID\":\"0123456789ab\""), std::string::npos);
  std::string def = *render_images(rows, nullptr, 1704067200 + 3 * 86400);
  EXPECT_EQ(def.substr(0, def.find('\n')), "REPOSITORY                  TAG      IMAGE ID       CREATED      SIZE");
  EXPECT_NE(def.find("3 days ago"), std::string::npos);
}

TEST(ImagesFormat, BadTemplatesAreUsageErrors) {
  for (const char* bad : {"{{.Nope}}", "{{.ID", "{{ID}}", "{{json .Nope}}"}) {
    auto f = parse_image_format(bad);
    ASSERT_FALSE(f) << bad;
    EXPECT_EQ(f.error().kind(), ErrorKind::usage) << bad;
  }
}

}  // namespace
}  // namespace kern::cli
