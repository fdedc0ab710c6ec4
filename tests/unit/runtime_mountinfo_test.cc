// /proc/PID/mountinfo parsing: fields, optional fields, escapes, and lines of another shape.
#include <gtest/gtest.h>

#include "runtime/sys/mountinfo.h"

namespace kern::sys {
namespace {

TEST(MountInfo, FieldsOptionalFieldsAndEscapes) {
  auto m = parse_mountinfo(
      "36 35 98:0 /mnt1 /mnt/my\\040dir rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue\n"
      "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
      "junk without a separator\n"
      "37 30 0:33 /inner /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].root, "/mnt1");
  EXPECT_EQ(m[0].point, "/mnt/my dir");
  EXPECT_EQ(m[0].type, "ext3");
  EXPECT_EQ(m[0].source, "/dev/root");
  EXPECT_EQ(m[0].super_options, "rw,errors=continue");
  EXPECT_EQ(m[1].point, "/proc");
  EXPECT_EQ(m[1].type, "proc");
  EXPECT_EQ(m[2].root, "/inner");
  EXPECT_EQ(m[2].super_options, "rw,pids");  // no newline at the end
}

TEST(MountInfo, UnescapeLeavesWhatIsNotAnOctalEscape) {
  EXPECT_EQ(unescape_mountinfo("a\\134b\\011c"), "a\\b\tc");
  EXPECT_EQ(unescape_mountinfo("a\\9zz"), "a\\9zz");
  EXPECT_EQ(unescape_mountinfo("end\\04"), "end\\04");
}

}  // namespace
}  // namespace kern::sys
