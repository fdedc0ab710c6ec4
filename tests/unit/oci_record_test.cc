// Store records: round trip, refusal of a tree id that is not 64 hex digits (it becomes a path
// component), reference escaping for file names.
#include <gtest/gtest.h>

#include "oci/image_record.h"

namespace kern::oci {
namespace {

TEST(OciRecord, RoundTrip) {
  ImageRecord r;
  r.ref = "docker.io/library/busybox:latest";
  r.digest = "sha256:" + std::string(64, 'a');
  r.config_digest = "sha256:" + std::string(64, 'b');
  r.layers = {"sha256:" + std::string(64, 'c')};
  r.tree = std::string(64, 'd');
  r.size = 42;
  r.has_owners = true;
  r.config.entrypoint = {"/e"};
  r.config.cmd = {"a", "b"};
  r.config.env = {"K=V"};
  r.config.working_dir = "/w";
  r.config.user = "1:2";
  r.source_stamp = "1:2:3";
  auto back = record_from_json(record_to_json(r));
  ASSERT_TRUE(back) << back.error().what();
  EXPECT_EQ(back->ref, r.ref);
  EXPECT_EQ(back->tree, r.tree);
  EXPECT_EQ(back->size, 42u);
  EXPECT_TRUE(back->has_owners);
  EXPECT_EQ(back->config.cmd, r.config.cmd);
  EXPECT_EQ(back->config.user, "1:2");
  EXPECT_EQ(back->source_stamp, "1:2:3");
}

TEST(OciRecord, RefusesTreeIdThatIsNotAHash) {
  ImageRecord r;
  r.digest = "sha256:" + std::string(64, 'a');
  for (std::string bad : {std::string("../../etc"), std::string(64, 'A'), std::string(63, 'a'), std::string()}) {
    r.tree = bad;
    EXPECT_FALSE(record_from_json(record_to_json(r))) << bad;
  }
  EXPECT_FALSE(record_from_json("{}"));
  EXPECT_FALSE(record_from_json("[]"));
}

TEST(OciRecord, EscapesReferences) {
  EXPECT_EQ(escape_ref("docker.io/library/busybox:latest"), "docker.io%2Flibrary%2Fbusybox%3Alatest");
  EXPECT_EQ(escape_ref("oci:/a b"), "oci%3A%2Fa%20b");
  std::string long_ref = "oci:/" + std::string(300, 'x');
  std::string e = escape_ref(long_ref);
  EXPECT_LE(e.size(), 200u);
  EXPECT_NE(escape_ref(long_ref + "y"), e);
  EXPECT_EQ(e.find('/'), std::string::npos);
}

}  // namespace
}  // namespace kern::oci
