// Enforcement read back from cgroup files (runtime/cgroup/box_cgroup.h, runtime/cgroup/enforcement.h) against fake
// trees: enforced, not enforced and undetermined, and the started-fd byte each one gives.
#include <gtest/gtest.h>

#include "runtime/cgroup/box_cgroup.h"
#include "runtime/cgroup/enforcement.h"
#include "tests/unit/runtime_cgroup_fake_tree.h"

namespace kern {
namespace {

using testing::FakeCgroupTree;
constexpr uint64_t MiB = 1024 * 1024;
const std::string kBox = "/user/svc/kern/box-t-1-2";

Limits limits(uint64_t mem, uint64_t pids) {
  Limits l;
  l.memory_max = mem;
  l.pids_max = pids;
  return l;
}

// The box and its ancestors, with memory.max / pids.max as given ("" = file absent).
void lay_out(const FakeCgroupTree& t, const std::string& box_mem, const std::string& anc_mem,
             const std::string& box_pids = "32\n") {
  t.dir(kBox);
  if (!box_mem.empty()) t.file(kBox + "/memory.max", box_mem);
  if (!box_pids.empty()) t.file(kBox + "/pids.max", box_pids);
  for (std::string a : {"/user/svc/kern", "/user/svc", "/user"}) {
    if (!anc_mem.empty()) t.file(a + "/memory.max", anc_mem);
    t.file(a + "/pids.max", "max\n");
  }
}

TEST(CgroupReadBack, EnforcedWhenTheBoxHoldsTheCap) {
  FakeCgroupTree t;
  lay_out(t, "33554432\n", "max\n");
  auto cg = BoxCgroup::adopt(t.host("/user/svc/init.scope"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg) << cg.error().what();
  Enforcement e = cg->read_back(limits(32 * MiB, 32));
  EXPECT_EQ(e.memory, Verdict::enforced);
  EXPECT_EQ(*e.memory_max, 32 * MiB);
  EXPECT_EQ(e.pids, Verdict::enforced);
  EXPECT_EQ(*e.pids_max, 32u);
  EXPECT_EQ(started_memory_byte(e), 1);
  EXPECT_EQ(e.cgroup_path, t.root() + kBox);
}

TEST(CgroupReadBack, EnforcedByATighterAncestor) {
  FakeCgroupTree t;
  lay_out(t, "max\n", "16777216\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  Enforcement e = cg->read_back(limits(32 * MiB, 32));
  EXPECT_EQ(e.memory, Verdict::enforced);
  EXPECT_EQ(*e.memory_max, 16 * MiB);
}

TEST(CgroupReadBack, NotEnforcedWhenNothingOnThePathHoldsIt) {
  FakeCgroupTree t;
  lay_out(t, "max\n", "max\n", "max\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  Enforcement e = cg->read_back(limits(32 * MiB, 32));
  EXPECT_EQ(e.memory, Verdict::not_enforced);
  EXPECT_EQ(e.pids, Verdict::not_enforced);
  EXPECT_EQ(started_memory_byte(e), 2);
}

TEST(CgroupReadBack, ALooserValueIsNotEnforcement) {
  FakeCgroupTree t;
  lay_out(t, "67108864\n", "max\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->read_back(limits(32 * MiB, 32)).memory, Verdict::not_enforced);
}

TEST(CgroupReadBack, MissingFilesMeanTheControllerIsOffAndNothingHolds) {
  FakeCgroupTree t;
  lay_out(t, "", "", "");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {});
  ASSERT_TRUE(cg);
  Enforcement e = cg->read_back(limits(32 * MiB, 32));
  EXPECT_EQ(e.memory, Verdict::not_enforced);
  EXPECT_FALSE(e.memory_max.has_value());
}

TEST(CgroupReadBack, UndeterminedWhenAFileCannotBeRead) {
  FakeCgroupTree t;
  lay_out(t, "", "max\n");
  t.dir(kBox + "/memory.max");  // a directory: read() fails with EISDIR, not ENOENT
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  Enforcement e = cg->read_back(limits(32 * MiB, 32));
  EXPECT_EQ(e.memory, Verdict::undetermined);
  EXPECT_EQ(started_memory_byte(e), 0);
}

TEST(CgroupReadBack, GarbageIsUndeterminedNeverEnforced) {
  FakeCgroupTree t;
  lay_out(t, "lots\n", "max\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->read_back(limits(32 * MiB, 32)).memory, Verdict::undetermined);
}

TEST(CgroupReadBack, DefaultsApplyWhenNothingWasAsked) {
  FakeCgroupTree t;
  lay_out(t, "536870912\n", "max\n", "512\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  Enforcement e = cg->read_back(Limits{});
  EXPECT_EQ(e.memory, Verdict::enforced);
  EXPECT_EQ(e.pids, Verdict::enforced);
}

TEST(CgroupReadBack, CpuCpusetAndIo) {
  FakeCgroupTree t;
  lay_out(t, "33554432\n", "max\n");
  t.file(kBox + "/cpu.max", "20000 100000\n");
  t.file(kBox + "/cpuset.cpus.effective", "1\n");
  t.file(kBox + "/io.max", "8:0 rbps=max wbps=1048576 riops=max wiops=max\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids", "cpu", "cpuset", "io"});
  ASSERT_TRUE(cg);
  Limits l = limits(32 * MiB, 32);
  l.cpus = 0.2;
  l.cpuset_cpus = "0-1";
  l.io_max = {IoThrottle{8, 0, "/dev/sda", 0, 1048576}};
  Enforcement e = cg->read_back(l);
  EXPECT_EQ(e.cpu, Verdict::enforced);
  EXPECT_NEAR(*e.cpus, 0.2, 1e-9);
  EXPECT_EQ(e.cpuset, Verdict::enforced);
  EXPECT_EQ(e.io, Verdict::enforced);
  t.file(kBox + "/cpu.max", "max 100000\n");
  t.file(kBox + "/cpuset.cpus.effective", "0-3\n");
  t.file(kBox + "/io.max", "8:0 rbps=max wbps=max riops=max wiops=max\n");
  e = cg->read_back(l);
  EXPECT_EQ(e.cpu, Verdict::not_enforced);
  EXPECT_EQ(e.cpuset, Verdict::not_enforced);
  EXPECT_EQ(e.io, Verdict::not_enforced);
  l.cpus.reset();
  EXPECT_EQ(cg->read_back(l).cpu, Verdict::not_requested);
}

TEST(CgroupReadBack, EventsFromTheFiles) {
  FakeCgroupTree t;
  lay_out(t, "33554432\n", "max\n");
  t.file(kBox + "/memory.events", "low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\noom_group_kill 1\n");
  t.file(kBox + "/pids.events", "max 5\n");
  t.file(kBox + "/memory.peak", "33550000\n");
  t.file(kBox + "/cpu.stat", "usage_usec 123456\nuser_usec 100000\n");
  auto cg = BoxCgroup::adopt(t.host("/"), kBox, {"memory", "pids"});
  ASSERT_TRUE(cg);
  MemoryEvents ev = cg->events();
  EXPECT_TRUE(ev.valid);
  EXPECT_EQ(ev.oom, 2u);
  EXPECT_EQ(ev.oom_kill, 1u);
  EXPECT_EQ(ev.oom_group_kill, 1u);
  EXPECT_EQ(ev.max, 17u);
  EXPECT_EQ(ev.pids_max_hits, 5u);
  EXPECT_EQ(ev.memory_peak, 33550000u);
  EXPECT_EQ(ev.cpu_usage_usec, 123456u);
}

TEST(EnforcementRules, CapVerdict) {
  using K = KnobReading;
  auto v = [](K::State s, uint64_t n = 0) { K k; k.state = s; k.number = n; return k; };
  std::optional<uint64_t> tight;
  EXPECT_EQ(cap_verdict(10, {v(K::value, 10)}, &tight), Verdict::enforced);
  EXPECT_EQ(cap_verdict(10, {v(K::value, 11)}, &tight), Verdict::not_enforced);
  EXPECT_EQ(cap_verdict(10, {v(K::unlimited), v(K::value, 5)}, &tight), Verdict::enforced);
  EXPECT_EQ(*tight, 5u);
  EXPECT_EQ(cap_verdict(10, {v(K::unreadable), v(K::unlimited)}, &tight), Verdict::undetermined);
  EXPECT_EQ(cap_verdict(10, {v(K::unreadable), v(K::value, 3)}, &tight), Verdict::enforced);
  EXPECT_EQ(cap_verdict(10, {v(K::absent), v(K::unlimited)}, &tight), Verdict::not_enforced);
  EXPECT_EQ(cap_verdict(10, {}, &tight), Verdict::undetermined);
}

TEST(EnforcementRules, KnobParsing) {
  EXPECT_EQ(parse_limit_knob("max\n").state, KnobReading::unlimited);
  EXPECT_EQ(parse_limit_knob("1234\n").number, 1234u);
  EXPECT_EQ(parse_limit_knob("").state, KnobReading::unreadable);
  EXPECT_EQ(parse_limit_knob("12a").state, KnobReading::unreadable);
  EXPECT_EQ(parse_limit_knob("99999999999999999999999").state, KnobReading::unreadable);
}

TEST(EnforcementRules, CpuQuotaIsClampedToTheHost) {
  EXPECT_EQ(cpu_quota_us(0.2, 2), 20000u);
  EXPECT_EQ(cpu_quota_us(1.5, 8), 150000u);
  EXPECT_EQ(cpu_quota_us(8, 2), 200000u);
  EXPECT_EQ(cpu_quota_us(0.001, 2), 1000u);
}

TEST(EnforcementRules, WithoutACgroupOnlyExplicitCapsCountAsRequested) {
  Enforcement none = uncapped_enforcement(Limits{});
  EXPECT_EQ(none.memory, Verdict::not_requested);
  EXPECT_EQ(started_memory_byte(none), 0);
  Limits l;
  l.memory_max = 32 * MiB;
  l.cpus = 1;
  Enforcement asked = uncapped_enforcement(l);
  EXPECT_EQ(asked.memory, Verdict::not_enforced);
  EXPECT_EQ(asked.cpu, Verdict::not_enforced);
  EXPECT_EQ(asked.pids, Verdict::not_requested);
  EXPECT_EQ(started_memory_byte(asked), 2);
  EXPECT_FALSE(limits_in_force(asked));
}

}  // namespace
}  // namespace kern
