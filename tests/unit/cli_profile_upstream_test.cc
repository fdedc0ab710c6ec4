// The upstream schema's keys applied to a BoxSpec (cli/profile_apply.h, issue 12): nice reaches
// the workload's exec plan, a vdisk's iops/bandwidth become io.max of its disk (a flag wins),
// persistent vdisks keep one directory, a vdisk without backend takes the default disk, and
// [kern] warn_uncapped = false quietens the uncapped warning for the default caps only.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>

#include "cli/profile_apply.h"
#include "profiles/toml_profiles.h"
#include "profiles/units.h"
#include "runtime/cgroup/box_cgroup.h"
#include "runtime/launch_plan.h"
#include "unit/runtime_cgroup_fake_tree.h"

namespace kern::cli {
namespace {

class TempDir {
 public:
  TempDir() {
    char t[] = "/tmp/kern-upstream-apply.XXXXXX";
    if (::mkdtemp(t)) path_ = t;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name) << text;
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

profiles::ProfileSet parsed(const std::string& text) {
  profiles::ParseOutcome o = profiles::parse_profiles(text, "k.toml");
  EXPECT_TRUE(o.problems.empty()) << (o.problems.empty() ? "" : o.problems[0].message);
  return o.set;
}

TEST(ProfileUpstream, NiceReachesTheWorkloadsExecPlan) {
  auto set = parsed("[[vcpu]]\nname = \"n\"\nbackend = \"host\"\nnice = 5\n");
  BoxSpec spec;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(apply_profiles({"vcpu:n"}, set, spec, ExplicitFlags{}));
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(prepare(spec).exec.nice, 5);
  EXPECT_FALSE(prepare(BoxSpec{}).exec.nice.has_value());
}

TEST(ProfileUpstream, VdiskIoBecomesIoMaxOfItsDiskAndAFlagWins) {
  TempDir d;
  auto set = parsed("[[disk]]\nname = \"disk:0\"\npath = \"" + d.path() +
                    "\"\ndefault = true\niops = 300\n\n[[vdisk]]\nname = \"v\"\nsize = \"1m\"\nbandwidth = \"10 MB/s\"\n");
  struct stat st;
  ASSERT_EQ(::stat(d.path().c_str(), &st), 0);
  BoxSpec spec;
  ProfileReport report;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(apply_profiles({"vdisk:v"}, set, spec, ExplicitFlags{}, &report));
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(spec.binds.size(), 1u);  // the default disk, though the vdisk names no backend
  EXPECT_EQ(spec.binds[0].source.rfind(d.path() + "/kern-", 0), 0u) << spec.binds[0].source;
  if (::major(st.st_dev) == 0) {
    EXPECT_TRUE(spec.limits.io_max.empty());
    EXPECT_NE(err.find("kern: warning: vdisk:v: iops/bandwidth are not applied"), std::string::npos) << err;
    GTEST_SKIP() << d.path() << " is on a file system without a block device";
  }
  ASSERT_EQ(spec.limits.io_max.size(), 1u) << err;
  const IoThrottle& t = spec.limits.io_max[0];
  EXPECT_EQ(t.riops, 300u);  // the disk's iops: the vdisk sets none
  EXPECT_EQ(t.wiops, 300u);
  EXPECT_EQ(t.rbps, 10 * profiles::kMiB);
  EXPECT_EQ(t.wbps, 10 * profiles::kMiB);
  // A flag already set riops for that device: it stays.
  BoxSpec flagged;
  flagged.limits.io_max.push_back(IoThrottle{t.major, t.minor, "/dev/x", 0, 0, 7, 0});
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(apply_profiles({"vdisk:v"}, set, flagged, ExplicitFlags{}));
  ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(flagged.limits.io_max.size(), 1u);
  EXPECT_EQ(flagged.limits.io_max[0].riops, 7u);
  EXPECT_EQ(flagged.limits.io_max[0].wiops, 300u);
}

TEST(ProfileUpstream, PersistentVdiskKeepsOneDirectory) {
  TempDir d;
  auto set = parsed("[[disk]]\nid = \"disk:0\"\npath = \"" + d.path() +
                    "\"\n\n[[vdisk]]\nname = \"keep\"\nbackend = \"disk:0\"\nsize = \"1m\"\npersistent = true\n");
  BoxSpec a, b;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(apply_profiles({"vdisk:keep"}, set, a, ExplicitFlags{}));
  ASSERT_TRUE(apply_profiles({"vdisk:keep"}, set, b, ExplicitFlags{}));
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(a.binds.size(), 1u);
  EXPECT_FALSE(a.binds[0].ephemeral);
  EXPECT_TRUE(a.binds[0].create_missing);
  EXPECT_EQ(a.binds[0].source, d.path() + "/kern-" + std::to_string(::getuid()) + "-persistent-keep");
  EXPECT_EQ(a.binds[0].source, b.binds[0].source);
  EXPECT_NE(err.find("which is kept (persistent = true)"), std::string::npos) << err;
}

class UncappedSetting : public ::testing::Test {
 protected:
  // The check from `config` as kern box makes it (no tokens: nothing read yet), then
  // creates a box cgroup on a host without a delegated subtree; returns what was printed.
  std::string uncapped(const std::string& config, const Limits& limits) {
    BoxSpec spec;
    EXPECT_TRUE(apply_profiles({}, config, spec, ExplicitFlags{}));
    kern::testing::FakeCgroupTree t;
    t.file("/cgroup.controllers", "");
    ::testing::internal::CaptureStderr();
    auto r = BoxCgroup::create_in(t.host("/"), "box", "b", limits, CgroupPolicy::best_effort, spec.default_caps_warning);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(r);
    return err;
  }
};

TEST_F(UncappedSetting, FalseQuietensTheDefaultCapsOnly) {
  TempDir d;
  std::string quiet = d.write("quiet.toml", "[kern]\nwarn_uncapped = false\n");
  EXPECT_EQ(uncapped(quiet, Limits{}), "");
  Limits asked;
  asked.memory_max = 64 * profiles::kMiB;
  std::string err = uncapped(quiet, asked);
  EXPECT_EQ(err.rfind("kern: warning: no cgroup here: memory.max 64 MiB not in force", 0), 0u) << err;
}

TEST_F(UncappedSetting, TrueMissingOrBrokenKeepsTheWarning) {
  TempDir d;
  for (const std::string& cfg : {d.write("loud.toml", "[kern]\nwarn_uncapped = true\n"),
                                 d.write("broken.toml", "[kern]\nwarn_uncapped = false\ntypo = 1\n"),
                                 d.path() + "/missing.toml"}) {
    std::string err = uncapped(cfg, Limits{});
    EXPECT_EQ(err.rfind("kern: warning: no cgroup here: this box runs without", 0), 0u) << cfg << ": " << err;
  }
}

}  // namespace
}  // namespace kern::cli
