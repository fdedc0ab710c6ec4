// The one limit builder of kern box and kern run (issue 8 item 21): the flags and the
// variables KERN_REQUIRE_LIMITS / KERN_ALLOW_UNCAPPED exclude each other in any mix.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/limit_flags.h"

namespace kern::cli {
namespace {

struct EnvGuard {
  ~EnvGuard() {
    ::unsetenv("KERN_REQUIRE_LIMITS");
    ::unsetenv("KERN_ALLOW_UNCAPPED");
    ::unsetenv("KERN_NO_SCOPE");
  }
};

Status build(const LimitOptions& o, BoxSpec& spec) {
  ExplicitFlags ex;
  return build_limits(o, spec, ex);
}

TEST(LimitFlags, RequireAndUncappedExcludeEachOtherAsFlagsOrVariables) {
  EnvGuard g;
  for (int mix = 0; mix < 4; ++mix) {
    ::unsetenv("KERN_REQUIRE_LIMITS");
    ::unsetenv("KERN_ALLOW_UNCAPPED");
    LimitOptions o;
    if (mix & 1) o.require_limits = true;
    else ::setenv("KERN_REQUIRE_LIMITS", "1", 1);
    if (mix & 2) o.allow_uncapped = true;
    else ::setenv("KERN_ALLOW_UNCAPPED", "0", 1);  // any non-empty value counts
    BoxSpec spec;
    auto r = build(o, spec);
    ASSERT_FALSE(r) << "mix " << mix;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage);
    EXPECT_NE(r.error().what().find("exclude each other"), std::string::npos) << r.error().what();
  }
}

TEST(LimitFlags, PolicyAndExplicitMarks) {
  EnvGuard g;
  LimitOptions o;
  o.memory = "64m";
  o.pids = "10";
  ::setenv("KERN_ALLOW_UNCAPPED", "1", 1);
  BoxSpec spec;
  ExplicitFlags ex;
  ASSERT_TRUE(build_limits(o, spec, ex));
  EXPECT_EQ(spec.limits.memory_max, 64u << 20);
  EXPECT_EQ(spec.limits.pids_max, 10u);
  EXPECT_TRUE(ex.memory);
  EXPECT_TRUE(ex.pids);
  EXPECT_FALSE(ex.cpus);
  EXPECT_EQ(spec.cgroup_policy, CgroupPolicy::allow_uncapped);

  ::setenv("KERN_NO_SCOPE", "1", 1);
  BoxSpec none;
  ASSERT_TRUE(build(o, none));
  EXPECT_EQ(none.cgroup_policy, CgroupPolicy::none);

  ::unsetenv("KERN_NO_SCOPE");
  ::unsetenv("KERN_ALLOW_UNCAPPED");
  LimitOptions req;
  req.require_limits = true;
  BoxSpec r;
  ASSERT_TRUE(build(req, r));
  EXPECT_EQ(r.cgroup_policy, CgroupPolicy::require);
}

TEST(LimitFlags, BadValuesAreErrors) {
  EnvGuard g;
  for (auto set : {+[](LimitOptions& o) { o.memory = "lots"; }, +[](LimitOptions& o) { o.pids = "1"; },
                   +[](LimitOptions& o) { o.cpus = "-1"; }, +[](LimitOptions& o) { o.cpuset = "x"; }}) {
    LimitOptions o;
    set(o);
    BoxSpec spec;
    EXPECT_FALSE(build(o, spec));
  }
}

// Docker's --memory-swap is memory plus swap: kern writes the difference to memory.swap.max.
TEST(LimitFlags, DockerMemorySwapIsMemoryPlusSwap) {
  EnvGuard g;
  auto swap_of = [](const char* mem, const char* total) -> Result<std::optional<uint64_t>> {
    LimitOptions o;
    if (*mem) o.memory = mem;  // "": no -m at all
    o.memory_swap_total = total;
    BoxSpec spec;
    ExplicitFlags ex;
    KERN_TRY(build_limits(o, spec, ex));
    EXPECT_TRUE(ex.memory_swap);
    return spec.limits.memory_swap_max;
  };
  EXPECT_EQ(**swap_of("64m", "96m"), 32u << 20);
  EXPECT_EQ(**swap_of("64m", "64m"), 0u);
  EXPECT_EQ(**swap_of("64m", "-1"), kSwapUnlimited);
  auto below = swap_of("64m", "32m");
  ASSERT_FALSE(below.has_value());
  EXPECT_NE(below.error().message().find("is below -m 64m"), std::string::npos);
  auto no_mem = swap_of("", "1g");
  ASSERT_FALSE(no_mem.has_value());
  EXPECT_NE(no_mem.error().message().find("needs -m/--memory"), std::string::npos);
  // Issue 21 (item 25): -m "" is refused, not taken as no -m.
  LimitOptions empty;
  empty.memory = "";
  BoxSpec unused;
  ExplicitFlags unused_ex;
  auto refused = build_limits(empty, unused, unused_ex);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(), "-m/--memory: the value is empty");
  auto bad = swap_of("64m", "lots");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind(), ErrorKind::usage);
  LimitOptions both;
  both.memory = "64m";
  both.memory_swap_total = "1g";
  both.memory_swap = "1m";
  BoxSpec spec;
  auto r = build(both, spec);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("exclude each other"), std::string::npos);
}

}  // namespace
}  // namespace kern::cli
