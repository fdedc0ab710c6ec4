// io.max lines as kern writes them and the verdict of what the kernel shows back
// (runtime/cgroup/io_throttle.h), and the read-back through a box cgroup on a fake tree.
#include <gtest/gtest.h>

#include "runtime/cgroup/box_cgroup.h"
#include "runtime/cgroup/io_throttle.h"
#include "tests/unit/runtime_cgroup_fake_tree.h"

namespace kern {
namespace {

IoThrottle disk(uint32_t ma, uint32_t mi, uint64_t rbps, uint64_t wbps, uint64_t riops = 0, uint64_t wiops = 0) {
  IoThrottle t;
  t.major = ma;
  t.minor = mi;
  t.device = "/dev/x";
  t.rbps = rbps;
  t.wbps = wbps;
  t.riops = riops;
  t.wiops = wiops;
  return t;
}

TEST(IoMax, TheLineNamesOnlyTheCapsAskedFor) {
  EXPECT_EQ(io_max_line(disk(8, 0, 0, 1048576)), "8:0 wbps=1048576");
  EXPECT_EQ(io_max_line(disk(254, 16, 1, 2, 3, 4)), "254:16 rbps=1 wbps=2 riops=3 wiops=4");
}

TEST(IoMax, VerdictOfWhatTheKernelShows) {
  std::vector<IoThrottle> want{disk(8, 0, 0, 1048576)};
  EXPECT_EQ(io_max_verdict({}, std::nullopt), Verdict::not_requested);
  EXPECT_EQ(io_max_verdict(want, "8:0 rbps=max wbps=1048576 riops=max wiops=max\n"), Verdict::enforced);
  // Keys a newer kernel may add are no reason to doubt the ones asked for.
  EXPECT_EQ(io_max_verdict(want, "8:0 rbps=max wbps=1048576 riops=max wiops=max xbps=7\n"), Verdict::enforced);
  EXPECT_EQ(io_max_verdict(want, "8:0 rbps=max wbps=max riops=max wiops=max\n"), Verdict::not_enforced);
  EXPECT_EQ(io_max_verdict(want, "8:0 rbps=max wbps=2097152 riops=max wiops=max\n"), Verdict::not_enforced);
  EXPECT_EQ(io_max_verdict(want, "8:16 rbps=max wbps=1048576 riops=max wiops=max\n"), Verdict::not_enforced);
  EXPECT_EQ(io_max_verdict(want, ""), Verdict::not_enforced);
  EXPECT_EQ(io_max_verdict(want, std::nullopt), Verdict::undetermined);
  EXPECT_EQ(io_max_verdict(want, "8:0 wbps=lots\n"), Verdict::undetermined);
  EXPECT_EQ(io_max_verdict(want, "eight:0 wbps=1\n"), Verdict::undetermined);
  std::vector<IoThrottle> two{disk(8, 0, 0, 1048576), disk(254, 0, 0, 0, 100, 0)};
  EXPECT_EQ(io_max_verdict(two, "8:0 rbps=max wbps=1048576 riops=max wiops=max\n"), Verdict::not_enforced);
  EXPECT_EQ(io_max_verdict(two, "254:0 rbps=max wbps=max riops=100 wiops=max\n"
                                "8:0 rbps=max wbps=1048576 riops=max wiops=max\n"),
            Verdict::enforced);
}

TEST(IoMax, ReadBackThroughTheBoxCgroup) {
  testing::FakeCgroupTree t;
  const std::string box = "/u/svc/kern/box-io-1-2";
  t.dir(box);
  t.file(box + "/memory.max", "max\n");
  t.file(box + "/pids.max", "max\n");
  auto cg = BoxCgroup::adopt(t.host("/u/svc/init.scope"), box, {"memory", "pids", "io"});
  ASSERT_TRUE(cg) << cg.error().what();
  Limits l;
  l.io_max = {disk(8, 0, 0, 1048576)};
  EXPECT_EQ(cg->read_back(l).io, Verdict::not_enforced);  // no io.max: the io controller is off
  t.file(box + "/io.max", "8:0 rbps=max wbps=1048576 riops=max wiops=max\n");
  EXPECT_EQ(cg->read_back(l).io, Verdict::enforced);
  t.file(box + "/io.max", "");
  EXPECT_EQ(cg->read_back(l).io, Verdict::not_enforced);
  EXPECT_EQ(cg->read_back(Limits{}).io, Verdict::not_requested);
  EXPECT_EQ(uncapped_enforcement(l).io, Verdict::not_enforced);
}

}  // namespace
}  // namespace kern
