// What a box without a cgroup says (issue 8 item 17): under --allow-uncapped the default caps go
// silently, a cap that was asked for is always named.
#include <gtest/gtest.h>

#include "runtime/cgroup/box_cgroup.h"

namespace kern {
namespace {

TEST(UncappedWarning, AllowUncappedIsSilentOnlyForTheDefaults) {
  Limits defaults;
  EXPECT_EQ(uncapped_warning(CgroupPolicy::allow_uncapped, defaults, "box"), "");

  Limits asked;
  asked.memory_max = 64u << 20;
  asked.pids_max = 10;
  std::string w = uncapped_warning(CgroupPolicy::allow_uncapped, asked, "box");
  EXPECT_EQ(w, "no cgroup here: memory.max 64 MiB, pids.max 10 not in force, this box runs uncapped "
               "(kern doctor says why)");

  Limits cpu;
  cpu.cpus = 0.5;
  EXPECT_NE(uncapped_warning(CgroupPolicy::allow_uncapped, cpu, "run").find("cpu.max"), std::string::npos);
}

TEST(UncappedWarning, BestEffortAlwaysWarnsAndNamesWhatWasAskedFor) {
  Limits defaults;
  EXPECT_NE(uncapped_warning(CgroupPolicy::best_effort, defaults, "box").find("--allow-uncapped"),
            std::string::npos);
  Limits asked;
  asked.pids_max = 7;
  EXPECT_NE(uncapped_warning(CgroupPolicy::best_effort, asked, "run").find("pids.max 7"), std::string::npos);
  EXPECT_EQ(uncapped_warning(CgroupPolicy::none, asked, "box"), "");
}

// Issue 21 (item 15): one short line, sizes for people, and how to silence it for good.
TEST(UncappedWarning, OneShortLineThatSaysHowToSilenceIt) {
  Limits defaults;
  std::string w = uncapped_warning(CgroupPolicy::best_effort, defaults, "box");
  EXPECT_LE(w.size() + 15, 170u) << w;
  EXPECT_NE(w.find("warn_uncapped = false"), std::string::npos) << w;
  Limits asked;
  asked.memory_max = 3u << 29;
  EXPECT_NE(uncapped_warning(CgroupPolicy::best_effort, asked, "box").find("memory.max 1.5 GiB not in force"),
            std::string::npos);
}

TEST(UncappedWarning, RequestedCapsList) {
  Limits l;
  EXPECT_EQ(requested_caps(l), "");
  l.memory_max = 1024;
  l.cpuset_cpus = "0-1";
  EXPECT_EQ(requested_caps(l), "memory.max 1 KiB, cpuset.cpus 0-1");
}

}  // namespace
}  // namespace kern
