// The named volume store (runtime/volume_store.h) in a scratch directory: the name rule, create
// (idempotent, labels kept), list, emptiness, size and remove.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "runtime/sys/syscall.h"
#include "runtime/volume_store.h"

namespace kern {
namespace {

class VolumeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-volume-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, dir_); }
  std::string dir_;
};

TEST(VolumeName, DockersRule) {
  const std::vector<std::string> good = {"a", "Z9", "data", "my-vol_1.2", "0abc", std::string(128, 'x')};
  for (const auto& ok : good) EXPECT_TRUE(valid_volume_name(ok)) << ok;
  const std::vector<std::string> bad = {"", "-a", ".a", "_a", "a/b", "a b", "a:b", "..", "\xc3\xa9", std::string(129, 'x')};
  for (const auto& b : bad) EXPECT_FALSE(valid_volume_name(b)) << b;
  auto st = check_volume_name("a/b", "kern volume create");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind(), ErrorKind::usage);
  EXPECT_NE(st.error().what().find("kern volume create: invalid volume name"), std::string::npos);
  EXPECT_TRUE(check_volume_name("ok", "x"));
}

TEST(VolumeName, RandomNamesAreHexAndDiffer) {
  std::string a = random_volume_name(), b = random_volume_name();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(valid_volume_name(a));
  EXPECT_NE(a, b);
}

TEST_F(VolumeStoreTest, CreateGetListRemove) {
  VolumeStore store(dir_ + "/volumes");
  EXPECT_TRUE(store.list().empty());  // no store directory yet
  bool created = false;
  auto v = store.create("data", {{"k", "v"}}, &created);
  ASSERT_TRUE(v) << v.error().what();
  EXPECT_TRUE(created);
  EXPECT_EQ(v->mountpoint, dir_ + "/volumes/data/_data");
  struct stat st;
  ASSERT_EQ(::stat(v->mountpoint.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_uid, ::getuid());
  // A second create finds it: not made again, its labels those of the first.
  auto again = store.create("data", {{"other", "x"}}, &created);
  ASSERT_TRUE(again);
  EXPECT_FALSE(created);
  ASSERT_EQ(again->labels.size(), 1u);
  EXPECT_EQ(again->labels[0].first, "k");
  EXPECT_EQ(again->created_unix, v->created_unix);
  ASSERT_TRUE(store.create("alpha", {}));
  auto all = store.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "alpha");
  EXPECT_EQ(all[1].name, "data");
  auto missing = store.get("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind(), ErrorKind::config);
  EXPECT_NE(missing.error().what().find("no volume named"), std::string::npos);
  ASSERT_TRUE(store.remove("data"));
  EXPECT_FALSE(store.get("data"));
  EXPECT_EQ(store.list().size(), 1u);
  EXPECT_FALSE(store.remove("data"));
  EXPECT_FALSE(store.create("a/b", {}));
}

TEST_F(VolumeStoreTest, EmptinessAndSize) {
  VolumeStore store(dir_ + "/volumes");
  auto v = store.create("v", {});
  ASSERT_TRUE(v);
  EXPECT_TRUE(store.is_empty("v"));
  EXPECT_EQ(tree_bytes(v->mountpoint), 0u);
  ASSERT_EQ(::mkdir((v->mountpoint + "/sub").c_str(), 0755), 0);
  std::ofstream(v->mountpoint + "/sub/f") << std::string(1000, 'a');
  ASSERT_EQ(::symlink("sub/f", (v->mountpoint + "/link").c_str()), 0);
  EXPECT_FALSE(store.is_empty("v"));
  EXPECT_EQ(tree_bytes(v->mountpoint), 1000u + 5u);  // the file and the symlink's target text
  EXPECT_FALSE(store.is_empty("missing"));           // no volume is not an empty one
  // Removing takes the data too.
  ASSERT_TRUE(store.remove("v"));
  EXPECT_NE(::access(v->mountpoint.c_str(), F_OK), 0);
}

// A starting box holds its volume: remove() is refused while the hold is open, allowed after.
TEST_F(VolumeStoreTest, AHeldVolumeIsNotRemoved) {
  VolumeStore store(dir_ + "/volumes");
  ASSERT_TRUE(store.create("busy", {}));
  {
    auto held = store.hold("busy");
    ASSERT_TRUE(held) << held.error().what();
    auto second = store.hold("busy");  // holds share
    ASSERT_TRUE(second);
    auto st = store.remove("busy");
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().kind(), ErrorKind::config);
    EXPECT_NE(st.error().what().find("is in use by a box that is starting"), std::string::npos);
    EXPECT_TRUE(store.get("busy"));
  }
  EXPECT_TRUE(store.remove("busy"));
  EXPECT_FALSE(store.hold("busy"));  // nothing left to hold
}

}  // namespace
}  // namespace kern
