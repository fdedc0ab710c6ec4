// The volume verbs' shared pieces (cli/volume_verbs.h): a volume's object in Docker's shape and
// the refusal of removing a volume in use.
#include <gtest/gtest.h>

#include "cli/volume_verbs.h"

namespace kern::cli::volume_verbs {
namespace {

TEST(VolumeObject, DockersShapeAndOrder) {
  VolumeInfo v;
  v.name = "data";
  v.mountpoint = "/home/u/.cache/kern/volumes/data/_data";
  v.created_unix = 1700000000;  // 2023-11-14T22:13:20Z
  auto j = volume_object(v);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"CreatedAt", "Driver", "Labels", "Mountpoint", "Name", "Options", "Scope"}));
  EXPECT_EQ(j["CreatedAt"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(j["Driver"], "local");
  EXPECT_EQ(j["Scope"], "local");
  EXPECT_TRUE(j["Labels"].is_null());  // none: null, as docker prints it
  EXPECT_TRUE(j["Options"].is_null());
  EXPECT_EQ(j["Mountpoint"], v.mountpoint);
  v.labels = {{"team", "db"}, {"tier", ""}};
  auto l = volume_object(v)["Labels"];
  ASSERT_TRUE(l.is_object());
  EXPECT_EQ(l["team"], "db");
  EXPECT_EQ(l["tier"], "");
}

TEST(VolumeObject, InUseNamesTheBoxes) {
  Error e = volume_in_use("data", {"web", "db"});
  EXPECT_EQ(e.kind(), ErrorKind::config);
  EXPECT_NE(e.what().find("volume \"data\" is in use by \"web\", \"db\""), std::string::npos) << e.what();
}

}  // namespace
}  // namespace kern::cli::volume_verbs
