// config.json mounts: the options -> mount(2) flags and data, and the order of the root's steps.
#include <gtest/gtest.h>

#include <linux/mount.h>
#include <sys/mount.h>

#include "runtime/bundle/mount_options.h"
#include "runtime/bundle/oci_root.h"

namespace kern::bundle {
namespace {

TEST(BundleMountOptions, FlagsDataAndNegations) {
  MountOptions o = parse_mount_options({"nosuid", "strictatime", "mode=755", "size=65536k", "nodev", "dev"});
  EXPECT_EQ(o.flags, static_cast<unsigned long>(MS_NOSUID | MS_STRICTATIME));
  EXPECT_EQ(o.data, "mode=755,size=65536k");
  EXPECT_FALSE(o.bind);
  MountOptions ro = parse_mount_options({"ro", "rw", "ro"});
  EXPECT_EQ(ro.flags, static_cast<unsigned long>(MS_RDONLY));
}

TEST(BundleMountOptions, BindPropagationAndRecursiveAttrs) {
  MountOptions o = parse_mount_options({"rbind", "rprivate", "rro", "rnosuid", "idmap"});
  EXPECT_TRUE(o.bind);
  EXPECT_TRUE(o.recursive_bind);
  EXPECT_EQ(o.propagation, static_cast<unsigned long>(MS_PRIVATE | MS_REC));
  EXPECT_EQ(o.attr_set, static_cast<uint64_t>(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID));
  EXPECT_TRUE(o.idmap);
  EXPECT_FALSE(o.recursive_idmap);
  EXPECT_TRUE(o.data.empty());
  MountOptions b = parse_mount_options({"bind", "slave", "rrw"});
  EXPECT_FALSE(b.recursive_bind);
  EXPECT_EQ(b.propagation, static_cast<unsigned long>(MS_SLAVE));
  EXPECT_EQ(b.attr_clr, static_cast<uint64_t>(MOUNT_ATTR_RDONLY));
  EXPECT_TRUE(parse_mount_options({"tmpcopyup"}).tmpcopyup);
}

TEST(BundleMountPlan, DocumentOrderThenPivotThenReadonlyThenMasked) {
  auto r = parse_config(R"({"ociVersion": "1.2.0", "root": {"path": "r", "readonly": true},
    "mounts": [{"destination": "/proc", "type": "proc"}, {"destination": "/dev", "type": "tmpfs"},
               {"destination": "/dev/pts", "type": "devpts"}, {"destination": "/a", "type": "bind", "source": "/x"}],
    "linux": {"devices": [{"type": "c", "path": "/dev/fuse", "major": 10, "minor": 229}],
              "maskedPaths": ["/proc/kcore", "/proc/sys"], "readonlyPaths": ["/proc/sys"]}})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  std::vector<std::string> got;
  for (const auto& s : plan_oci_mounts(*r)) got.push_back(step_kind_name(s.kind) + " " + s.target);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "root-propagation /", "bind-root /", "mount /proc", "mount /dev", "mount /dev/pts", "mount /a",
                     "device /dev/fuse", "pivot-root /", "readonly /proc/sys", "mask /proc/kcore", "mask /proc/sys",
                     "root-readonly /"}));
}

}  // namespace
}  // namespace kern::bundle
