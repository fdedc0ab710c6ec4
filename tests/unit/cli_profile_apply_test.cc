// Profile tokens applied to a BoxSpec (cli/profile_apply.h): flag over profile over default,
// the first vcpu: to set a field wins (with a warning), vdisk:/vgpio: stack, every error names
// its token or file:line:column.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/profile_apply.h"
#include "profiles/toml_profiles.h"
#include "profiles/units.h"

namespace kern::cli {
namespace {

using profiles::kGiB;
using profiles::kMiB;

const char* kToml = R"([[cpu]]
id = "cpu:0"
cores = 2.0

[[vcpu]]
name = "heavy"
backend = "cpu:0"
cpus = 1.5
memory = "1g"
nice = 5

[[vcpu]]
name = "light"
backend = "host"
cpus = 0.5
memory = "256m"
cpuset = "0"

[[disk]]
id = "disk:0"
path = "/tmp"

[[vdisk]]
name = "scratch"
backend = "ram"
size = "16m"

[[vdisk]]
name = "big"
backend = "ram"
size = "2g"

[[vdisk]]
name = "data"
backend = "disk:0"
size = "1g"

[[gpio]]
id = "gpio:0"

[[vgpio]]
name = "absent"
backend = "gpio:0"
chips = ["/dev/gpiochip-kern-test-none"]

[[vgpio]]
name = "null"
backend = "host"
extra = ["/dev/null"]
)";

profiles::ProfileSet profile_set() {
  profiles::ParseOutcome o = profiles::parse_profiles(kToml, "k.toml");
  EXPECT_TRUE(o.problems.empty());
  return o.set;
}

struct Applied {
  Status status;
  BoxSpec spec;
  ProfileReport report;
  std::string err;
};

Applied apply(const std::vector<std::string>& tokens, const ExplicitFlags& ex = {}, BoxSpec spec = {}) {
  ::testing::internal::CaptureStderr();
  Applied r{Status(), std::move(spec), {}, {}};
  r.status = apply_profiles(tokens, profile_set(), r.spec, ex, &r.report);
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

TEST(ProfileApply, AProfileBeatsTheDefault) {
  Applied r = apply({"vcpu:heavy"});
  ASSERT_TRUE(r.status) << r.status.error().what();
  EXPECT_EQ(*r.spec.limits.memory_max, kGiB);
  EXPECT_DOUBLE_EQ(*r.spec.limits.cpus, 1.5);
  EXPECT_EQ(*r.spec.limits.nice, 5);
  EXPECT_FALSE(r.spec.limits.pids_max.has_value());  // not in the profile: the default stays
  EXPECT_EQ(r.err, "");
}

TEST(ProfileApply, AnExplicitFlagBeatsAProfile) {
  BoxSpec spec;
  spec.limits.memory_max = 32 * kMiB;
  ExplicitFlags ex;
  ex.memory = true;
  Applied r = apply({"vcpu:heavy"}, ex, spec);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(*r.spec.limits.memory_max, 32 * kMiB);
  EXPECT_DOUBLE_EQ(*r.spec.limits.cpus, 1.5);  // the fields the flags left alone still apply
  EXPECT_NE(r.err.find("kern: note: --memory overrides memory 1 GiB of vcpu:heavy"), std::string::npos) << r.err;
}

TEST(ProfileApply, TheFirstVcpuToSetAFieldWinsWithAWarning) {
  Applied r = apply({"vcpu:heavy", "vcpu:light"});
  ASSERT_TRUE(r.status);
  EXPECT_EQ(*r.spec.limits.memory_max, kGiB);
  EXPECT_DOUBLE_EQ(*r.spec.limits.cpus, 1.5);
  EXPECT_EQ(r.spec.limits.cpuset_cpus, "0");  // only light sets a cpuset: it applies
  EXPECT_NE(r.err.find("kern: warning: vcpu:light: memory 256 MiB is ignored: vcpu:heavy set it first"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kern: warning: vcpu:light: cpus 0.5 is ignored"), std::string::npos) << r.err;
  Applied other = apply({"vcpu:light", "vcpu:heavy"});
  EXPECT_EQ(*other.spec.limits.memory_max, 256 * kMiB);
}

TEST(ProfileApply, VdisksStackAndRamCountsAgainstMemory) {
  Applied r = apply({"vdisk:scratch", "vdisk:big", "vdisk:scratch"});
  ASSERT_TRUE(r.status);
  ASSERT_EQ(r.spec.tmpfs.size(), 2u);
  EXPECT_EQ(r.spec.tmpfs[0].dest, "/vdisk/scratch");
  EXPECT_EQ(r.spec.tmpfs[0].size_bytes, 16 * kMiB);
  EXPECT_EQ(r.spec.tmpfs[0].origin, "vdisk:scratch");
  EXPECT_EQ(r.spec.tmpfs[1].dest, "/vdisk/big");
  EXPECT_NE(r.err.find("kern: note: vdisk:scratch: the 16 MiB tmpfs at /vdisk/scratch counts against the box's memory"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot fill up before the box is out of memory"), std::string::npos) << r.err;
}

TEST(ProfileApply, AFlagMountAtTheSamePlaceWins) {
  BoxSpec spec;
  spec.tmpfs.push_back(TmpfsMount{"/vdisk/scratch", 0, "--tmpfs"});
  Applied r = apply({"vdisk:scratch"}, {}, spec);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(r.spec.tmpfs.size(), 1u);
  EXPECT_EQ(r.spec.tmpfs[0].origin, "--tmpfs");
}

TEST(ProfileApply, VdiskOnADiskSaysTheSizeIsNotEnforced) {
  Applied r = apply({"vdisk:data"});
  ASSERT_TRUE(r.status);
  ASSERT_EQ(r.spec.binds.size(), 1u);
  EXPECT_TRUE(r.spec.binds[0].ephemeral);
  EXPECT_EQ(r.spec.binds[0].dest, "/vdisk/data");
  EXPECT_EQ(r.spec.binds[0].source.rfind("/tmp/kern-", 0), 0u);
  EXPECT_NE(r.err.find("kern: warning: vdisk:data: the size 1 GiB on disk:0 is not enforced"), std::string::npos) << r.err;
  bool planned = false;
  for (const auto& l : r.report.plan) planned = planned || l.find("NOT enforced") != std::string::npos;
  EXPECT_TRUE(planned);
}

TEST(ProfileApply, VgpioSkipsMissingNodesAndRefusesByIdentity) {
  Applied r = apply({"vgpio:absent"});
  ASSERT_TRUE(r.status);
  EXPECT_TRUE(r.spec.devices.empty());
  EXPECT_NE(r.err.find("kern: warning: vgpio:absent: /dev/gpiochip-kern-test-none (k.toml:44:10) does not exist"),
            std::string::npos) << r.err;
  Applied bad = apply({"vgpio:null"});
  ASSERT_FALSE(bad.status);
  EXPECT_EQ(bad.status.error().kind(), ErrorKind::config);
  EXPECT_NE(bad.status.error().message().find("vgpio:null: k.toml:49:10:"), std::string::npos) << bad.status.error().message();
  EXPECT_NE(bad.status.error().message().find("(char 1:3) is refused"), std::string::npos) << bad.status.error().message();
}

TEST(ProfileApply, BadTokensAndUnknownNames) {
  for (const char* t : {"vcpu:../x", "vgpio:a;b", "vram:x"}) {
    Applied r = apply({t});
    ASSERT_FALSE(r.status) << t;
    EXPECT_EQ(r.status.error().kind(), ErrorKind::config);
    EXPECT_NE(r.status.error().message().find(t), std::string::npos) << r.status.error().message();
  }
  Applied r = apply({"vcpu:nope"});
  ASSERT_FALSE(r.status);
  EXPECT_NE(r.status.error().message().find("no [[vcpu]] named \"nope\" in k.toml (defined: heavy, light)"),
            std::string::npos) << r.status.error().message();
}

TEST(ProfileApply, NoTokensNeverReadsTheFile) {
  ::setenv("KERN_CONFIG", "/nonexistent/dir/kern.toml", 1);
  BoxSpec spec;
  EXPECT_TRUE(apply_profiles({}, std::string("/nonexistent/kern.toml"), spec, ExplicitFlags{}, nullptr));
  // A token with an explicit --config that is missing: an error naming the file.
  auto s = apply_profiles({"vcpu:x"}, std::string("/nonexistent/kern.toml"), spec, ExplicitFlags{}, nullptr);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().what().find("/nonexistent/kern.toml"), std::string::npos);
  // The default location (KERN_CONFIG) missing is an empty configuration: the name is unknown.
  s = apply_profiles({"vcpu:x"}, std::string(), spec, ExplicitFlags{}, nullptr);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("no [[vcpu]] named \"x\""), std::string::npos) << s.error().message();
  ::unsetenv("KERN_CONFIG");
}

}  // namespace
}  // namespace kern::cli
