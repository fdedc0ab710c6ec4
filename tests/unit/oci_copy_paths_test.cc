// kern cp's paths, pure: docker cp's marks ("/." and a trailing "/"), the lexical check of a
// path in a box (no ".." above its "/"), where a tree lands (docker cp's table), the renaming
// of the stream's entries, and an id through a user namespace's map.
#include <gtest/gtest.h>

#include <cerrno>

#include "oci/copy_paths.h"

namespace kern::oci {
namespace {

TEST(CopyPaths, BoxPathsAreCleanedFromTheBoxRoot) {
  auto p = box_copy_path("tmp//a/./b/../c");
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(p->path, "/tmp/a/c");
  EXPECT_FALSE(p->contents);
  EXPECT_FALSE(p->trailing_slash);
  p = box_copy_path("/tmp/../etc/hostname");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "/etc/hostname");
  p = box_copy_path("/");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "/");
}

TEST(CopyPaths, BoxPathsKeepDockersMarks) {
  auto p = box_copy_path("/tmp/d/.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "/tmp/d");
  EXPECT_TRUE(p->contents);
  p = box_copy_path("/tmp/d/");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "/tmp/d");
  EXPECT_TRUE(p->trailing_slash);
}

TEST(CopyPaths, DotDotAboveTheBoxRootIsRefused) {
  for (const char* raw : {"..", "../../etc/passwd", "/../../etc/passwd", "/a/../../x", "a/b/../../../c"}) {
    auto p = box_copy_path(raw);
    ASSERT_FALSE(p) << raw << " -> " << p->path;
    EXPECT_EQ(p.error().kind(), ErrorKind::usage) << raw;
    EXPECT_NE(p.error().message().find("climbs above"), std::string::npos) << raw;
    EXPECT_FALSE(p.error().explicit_hint().empty()) << raw;
  }
  // Down and up again stays inside: the discriminant of the refusal above.
  EXPECT_TRUE(box_copy_path("/a/b/../../x"));
  EXPECT_FALSE(box_copy_path(""));
}

TEST(CopyPaths, HostPathsLoseOnlyTheMarks) {
  CopyPath p = host_copy_path("dir/.");
  EXPECT_EQ(p.path, "dir");
  EXPECT_TRUE(p.contents);
  p = host_copy_path("../x/");
  EXPECT_EQ(p.path, "../x");
  EXPECT_TRUE(p.trailing_slash);
  p = host_copy_path(".");
  EXPECT_EQ(p.path, ".");
  EXPECT_TRUE(p.contents);
  EXPECT_EQ(host_copy_path("a/../b").path, "a/../b");
}

TEST(CopyPaths, ParentAndBase) {
  EXPECT_EQ(parent_of("a/b"), "a");
  EXPECT_EQ(parent_of("b"), ".");
  EXPECT_EQ(parent_of("/b"), "/");
  EXPECT_EQ(parent_of("/"), "/");
  EXPECT_EQ(base_of("/a/b/"), "b");
  EXPECT_EQ(base_of("/"), "/");
  EXPECT_EQ(stream_root_name(CopyPath{"/tmp/d", false, false}), "d");
  EXPECT_EQ(stream_root_name(CopyPath{"/tmp/d", true, false}), ".");
  EXPECT_EQ(stream_root_name(CopyPath{"/", false, false}), ".");
}

Landing land(const CopyPath& dst, DestState s, bool dir, const std::string& root) {
  auto l = copy_landing(dst, s, dir, root);
  EXPECT_TRUE(l) << l.error().what();
  return l ? *l : Landing{};
}

int refusal(const CopyPath& dst, DestState s, bool dir, const std::string& root) {
  auto l = copy_landing(dst, s, dir, root);
  EXPECT_FALSE(l) << dst.path << " -> " << l->dir << " " << l->name;
  return l ? 0 : l.error().sys_errno();
}

TEST(CopyLanding, DockersTable) {
  CopyPath d{"/tmp/x", false, false}, d_slash{"/tmp/x", false, true};
  // A file: into an existing directory, over a file, as a new name.
  Landing l = land(d, DestState::directory, false, "f");
  EXPECT_EQ(l.dir, "/tmp/x");
  EXPECT_EQ(l.name, "f");
  l = land(d, DestState::other, false, "f");
  EXPECT_EQ(l.dir, "/tmp");
  EXPECT_EQ(l.name, "x");
  l = land(d, DestState::missing, false, "f");
  EXPECT_EQ(l.dir, "/tmp");
  EXPECT_EQ(l.name, "x");
  EXPECT_EQ(refusal(d_slash, DestState::missing, false, "f"), ENOENT);
  EXPECT_EQ(refusal(d_slash, DestState::other, false, "f"), ENOTDIR);
  // A directory: into an existing one, as a new one, never onto a file.
  l = land(d, DestState::directory, true, "src");
  EXPECT_EQ(l.dir, "/tmp/x");
  EXPECT_EQ(l.name, "src");
  l = land(d_slash, DestState::missing, true, "src");
  EXPECT_EQ(l.dir, "/tmp");
  EXPECT_EQ(l.name, "x");
  EXPECT_EQ(refusal(d, DestState::other, true, "src"), ENOTDIR);
  // SRC/.: its contents straight into an existing directory, or as the new one.
  l = land(d, DestState::directory, true, ".");
  EXPECT_EQ(l.dir, "/tmp/x");
  EXPECT_EQ(l.name, ".");
  l = land(d, DestState::missing, true, ".");
  EXPECT_EQ(l.name, "x");
  // A relative host DST's parent is the working directory.
  EXPECT_EQ(land(CopyPath{"out", false, false}, DestState::missing, true, "d").dir, ".");
}

TEST(CopyLanding, EntriesAreRenamedBelowTheRootOnly) {
  EXPECT_EQ(land_entry("d", "d", "x"), "x");
  EXPECT_EQ(land_entry("d/sub/b", "d", "x"), "x/sub/b");
  EXPECT_EQ(land_entry("d/", "d", "x"), "x");
  EXPECT_EQ(land_entry(".", ".", "."), "");
  EXPECT_EQ(land_entry("./a", ".", "."), "a");
  EXPECT_EQ(land_entry("./a", ".", "new"), "new/a");
  EXPECT_EQ(land_entry("d/a", "d", "."), "a");
  EXPECT_EQ(land_entry("dd/a", "d", "x"), std::nullopt);
  EXPECT_EQ(land_entry("e/a", "d", "x"), std::nullopt);
  EXPECT_EQ(land_entry("/etc/passwd", "d", "x"), std::nullopt);
}

TEST(CopyIds, ThroughTheMapBothWays) {
  const std::string map = "         0       1000          1\n         1     100000      65536\n";
  EXPECT_EQ(map_id(map, 0, true), 1000u);
  EXPECT_EQ(map_id(map, 1, true), 100000u);
  EXPECT_EQ(map_id(map, 65536, true), 165535u);
  EXPECT_EQ(map_id(map, 65537, true), std::nullopt);
  EXPECT_EQ(map_id(map, 1000, false), 0u);
  EXPECT_EQ(map_id(map, 100005, false), 6u);
  EXPECT_EQ(map_id(map, 1001, false), std::nullopt);
  EXPECT_EQ(map_id("", 0, true), std::nullopt);
}

}  // namespace
}  // namespace kern::oci
