// cgroup v1 for root containers on v1 and hybrid hosts: the hierarchies read from mountinfo and
// /proc/self/cgroup, and linux.resources as v1 files (runc's names and values).
#include <gtest/gtest.h>

#include "runtime/cgroup/v1.h"

namespace kern::bundle {
namespace {

// A hybrid host as Debian 11 and Ubuntu 20.04 boot: controllers on v1, an empty cgroup2 beside.
constexpr const char* kMountinfo =
    "30 24 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw\n"
    "32 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid shared:11 - cgroup cgroup rw,xattr,name=systemd\n"
    "35 30 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:15 - cgroup cgroup rw,cpu,cpuacct\n"
    "36 30 0:32 / /sys/fs/cgroup/memory rw,nosuid shared:16 - cgroup cgroup rw,memory\n"
    "37 30 0:33 /inner /sys/fs/cgroup/pids rw,nosuid shared:17 - cgroup cgroup rw,pids\n";
constexpr const char* kProcCgroup =
    "12:pids:/inner/user.slice\n"
    "5:memory:/user.slice/session-1.scope\n"
    "3:cpu,cpuacct:/\n"
    "2:blkio:/user.slice\n"  // not mounted here: left out
    "1:name=systemd:/user.slice/session-1.scope\n"
    "0::/user.slice/session-1.scope\n";

TEST(CgroupV1, HierarchiesFromMountinfoAndProcCgroup) {
  auto hs = v1_hierarchies(kMountinfo, kProcCgroup);
  ASSERT_EQ(hs.size(), 4u);
  EXPECT_EQ(hs[0].controllers, std::vector<std::string>{"pids"});
  EXPECT_EQ(hs[0].mount, "/sys/fs/cgroup/pids");
  EXPECT_EQ(hs[0].self, "/user.slice");  // the mount's root "/inner" taken off
  EXPECT_EQ(hs[1].mount, "/sys/fs/cgroup/memory");
  EXPECT_EQ(hs[1].self, "/user.slice/session-1.scope");
  EXPECT_EQ(hs[2].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(hs[2].mount, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(hs[2].self, "/");
  EXPECT_EQ(hs[3].controllers, std::vector<std::string>{"name=systemd"});
}

// A cgroup2 mounted over the host's v1 tree in a mount namespace of the caller's (as a benchmark
// or a nested engine does): the v1 mounts are still listed, under it, and are no hierarchies.
TEST(CgroupV1, HierarchiesCoveredByALaterMountAreNone) {
  std::string covered = std::string(kMountinfo) + "90 24 0:40 / /sys/fs/cgroup rw - cgroup2 none rw\n";
  EXPECT_TRUE(v1_hierarchies(covered, kProcCgroup).empty());
  // The control: a mount elsewhere covers nothing.
  std::string beside = std::string(kMountinfo) + "90 24 0:40 / /sys/fs/cgroupx rw - cgroup2 none rw\n";
  EXPECT_EQ(v1_hierarchies(beside, kProcCgroup).size(), 4u);
  // One hierarchy covered by a mount on its own path.
  std::string one = std::string(kMountinfo) + "91 36 0:41 / /sys/fs/cgroup/memory rw - tmpfs tmpfs rw\n";
  EXPECT_EQ(v1_hierarchies(one, kProcCgroup).size(), 3u);
}

TEST(CgroupV1, PureV2HostHasNone) {
  EXPECT_TRUE(v1_hierarchies("31 24 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/user.slice\n").empty());
}

TEST(CgroupV1, ResourcesAsRuncWritesThem) {
  Resources r;
  r.memory_limit = 33554432;
  r.memory_swap = 67108864;  // memory plus swap, as memsw
  r.memory_reservation = -1;
  r.memory_kernel = 1 << 20;
  r.disable_oom_killer = true;
  r.cpu_shares = 512;
  r.cpu_quota = 50000;
  r.cpu_period = 100000;
  r.cpu_cpus = "0";
  r.pids_limit = -1;
  r.io_weight = 300;
  r.io_read_bps = {{8, 0, 1048576}};
  r.hugepage_limits = {{"2MB", 4194304}};
  std::vector<std::string> ignored;
  auto w = v1_resource_writes(r, &ignored);
  ASSERT_TRUE(w.has_value()) << w.error().what();
  std::vector<V1Write> want = {
      {"memory", "memory.limit_in_bytes", "33554432"},
      {"memory", "memory.memsw.limit_in_bytes", "67108864"},
      {"memory", "memory.soft_limit_in_bytes", "-1"},
      {"memory", "memory.oom_control", "1"},
      {"cpu", "cpu.shares", "512"},
      {"cpu", "cpu.cfs_period_us", "100000"},  // the period before the quota
      {"cpu", "cpu.cfs_quota_us", "50000"},
      {"cpuset", "cpuset.cpus", "0"},
      {"pids", "pids.max", "max"},
      {"blkio", "blkio.weight", "300"},
      {"blkio", "blkio.throttle.read_bps_device", "8:0 1048576"},
      {"hugetlb", "hugetlb.2MB.limit_in_bytes", "4194304"},
  };
  EXPECT_EQ(*w, want);
  EXPECT_EQ(ignored, std::vector<std::string>{"memory.kernel"});
}

TEST(CgroupV1, PidsZeroLeavesTheLimitAndUnifiedIsRefused) {
  Resources r;
  r.pids_limit = 0;
  auto w = v1_resource_writes(r, nullptr);
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->empty());
  r.unified = {{"memory.max", "1000"}};
  auto u = v1_resource_writes(r, nullptr);
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(std::string(u.error().what()).find("unified"), std::string::npos);
}

TEST(CgroupV1, LiftingMemoryLiftsMemoryPlusSwapFirst) {
  Resources r;
  r.memory_limit = -1;
  auto w = v1_resource_writes(r, nullptr);
  ASSERT_TRUE(w.has_value());
  std::vector<V1Write> want = {{"memory", "memory.memsw.limit_in_bytes", "-1", true},
                               {"memory", "memory.limit_in_bytes", "-1"}};
  EXPECT_EQ(*w, want);
  r.memory_swap = 1 << 30;  // said: as given
  EXPECT_EQ(v1_resource_writes(r, nullptr)->front().value, "-1");
  EXPECT_EQ(v1_resource_writes(r, nullptr)->size(), 2u);
  EXPECT_FALSE(v1_resource_writes(r, nullptr)->at(1).if_present);
}

TEST(CgroupV1, ExecCgroupSpecs) {
  std::string v2 = "/u/c";
  V1Dirs v1 = {{"cpu,cpuacct", "/c/c"}, {"memory", "/m/c"}, {"pids", "/p/c"}};
  ASSERT_TRUE(sub_cgroups({"memory:submem", "cpu,cpuacct:subcpu"}, &v2, &v1).has_value());
  EXPECT_EQ(v2, "/u/c");
  EXPECT_EQ(v1["memory"], "/m/c/submem");
  EXPECT_EQ(v1["cpu,cpuacct"], "/c/c/subcpu");  // once, though both controllers were named
  EXPECT_EQ(v1["pids"], "/p/c");
  ASSERT_TRUE(sub_cgroups({"/"}, &v2, &v1).has_value());
  EXPECT_EQ(v2, "/u/c");
  ASSERT_TRUE(sub_cgroups({"./a//b"}, &v2, &v1).has_value());
  EXPECT_EQ(v2, "/u/c/a/b");
  EXPECT_EQ(v1["pids"], "/p/c/a/b");
  auto up = sub_cgroups({".."}, &v2, &v1);
  ASSERT_FALSE(up.has_value());
  EXPECT_NE(std::string(up.error().what()).find(".. is not a sub cgroup path"), std::string::npos);
  EXPECT_FALSE(sub_cgroups({"a/../../x"}, &v2, &v1).has_value());
  auto unknown = sub_cgroups({"whaaat:/"}, &v2, &v1);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(std::string(unknown.error().what()).find("unknown controller"), std::string::npos);
  V1Dirs none;
  EXPECT_FALSE(sub_cgroups({"memory:x"}, &v2, &none).has_value());  // cgroup v2 alone
}

TEST(CgroupV1, DirForFindsAJointHierarchy) {
  V1Dirs d = {{"cpu,cpuacct", "/c/x"}, {"memory", "/m/x"}};
  EXPECT_EQ(v1_dir_for(d, "cpu"), "/c/x");
  EXPECT_EQ(v1_dir_for(d, "cpuacct"), "/c/x");
  EXPECT_EQ(v1_dir_for(d, "memory"), "/m/x");
  EXPECT_EQ(v1_dir_for(d, "pids"), "");
}

}  // namespace
}  // namespace kern::bundle
