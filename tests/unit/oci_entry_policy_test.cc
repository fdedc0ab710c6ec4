// The unpacker's pure per-entry decisions.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "oci/entry_policy.h"

namespace kern::oci {
namespace {

TEST(OciEntryPolicy, CleansNames) {
  UnpackLimits l;
  auto n = clean_entry_name("./usr//bin/./sh", l);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->path, "usr/bin/sh");
  EXPECT_EQ(n->parent, "usr/bin");
  EXPECT_EQ(n->leaf, "sh");
  EXPECT_EQ(clean_entry_name("/etc/passwd", l)->path, "etc/passwd");
  EXPECT_EQ(clean_entry_name("top", l)->parent, "");
  EXPECT_EQ(clean_entry_name("./", l)->path, "");
  EXPECT_EQ(clean_entry_name("dir/", l)->leaf, "dir");
}

TEST(OciEntryPolicy, RefusesDotDotAnywhere) {
  UnpackLimits l;
  for (const char* s : {"..", "../x", "a/..", "a/../b", "/../etc", "./.."}) EXPECT_FALSE(clean_entry_name(s, l)) << s;
  EXPECT_TRUE(clean_entry_name("a/..b/c..", l));
}

TEST(OciEntryPolicy, Classifies) {
  UnpackLimits l;
  auto k = [&](const char* name, unsigned type, bool hl = false) {
    auto r = classify_entry(*clean_entry_name(name, l), type, hl);
    return r ? static_cast<int>(*r) : -1;
  };
  EXPECT_EQ(k("a", S_IFREG), static_cast<int>(EntryKind::regular));
  EXPECT_EQ(k("a", S_IFDIR), static_cast<int>(EntryKind::directory));
  EXPECT_EQ(k("a", S_IFLNK), static_cast<int>(EntryKind::symlink));
  EXPECT_EQ(k("a", S_IFREG, true), static_cast<int>(EntryKind::hardlink));
  EXPECT_EQ(k("a", S_IFCHR), static_cast<int>(EntryKind::skip_device));
  EXPECT_EQ(k("a", S_IFBLK), static_cast<int>(EntryKind::skip_device));
  EXPECT_EQ(k("a", S_IFIFO), static_cast<int>(EntryKind::skip_fifo));
  EXPECT_EQ(k("a", S_IFSOCK), static_cast<int>(EntryKind::skip_socket));
  EXPECT_EQ(k("d/.wh.x", S_IFREG), static_cast<int>(EntryKind::whiteout));
  EXPECT_EQ(k("d/.wh..wh..opq", S_IFREG), static_cast<int>(EntryKind::opaque));
  EXPECT_EQ(k("d/.wh..wh.plnk", S_IFDIR), static_cast<int>(EntryKind::skip_whiteout_meta));
  // Unknown types fail closed.
  EXPECT_EQ(k("a", 0), -1);
  EXPECT_EQ(k("a", 0170000), -1);
}

TEST(OciEntryPolicy, WhiteoutTargets) {
  UnpackLimits l;
  EXPECT_EQ(*whiteout_target(*clean_entry_name("a/.wh.b", l)), "b");
  EXPECT_FALSE(whiteout_target(*clean_entry_name("a/.wh...", l)));
  EXPECT_FALSE(whiteout_target(*clean_entry_name("a/.wh..", l)));
  EXPECT_FALSE(whiteout_target(*clean_entry_name("a/.wh.", l)));
}

TEST(OciEntryPolicy, Modes) {
  EXPECT_EQ(sanitize_mode(04755), 0755u);
  EXPECT_EQ(sanitize_mode(02755), 0755u);
  EXPECT_EQ(sanitize_mode(01777), 01777u);
  EXPECT_TRUE(needs_ownership_record(0, 0, 04755));
  EXPECT_TRUE(needs_ownership_record(1, 0, 0644));
  EXPECT_FALSE(needs_ownership_record(0, 0, 01777));
}

}  // namespace
}  // namespace kern::oci
