// What a box without a cgroup says (issue 8 item 17): under --allow-uncapped the default caps go
// silently, a cap that was asked for is always named.
#include <gtest/gtest.h>

#include "runtime/cgroup.h"

namespace kern {
namespace {

TEST(UncappedWarning, AllowUncappedIsSilentOnlyForTheDefaults) {
  Limits defaults;
  EXPECT_EQ(uncapped_warning(CgroupPolicy::allow_uncapped, defaults, "no cgroup2 mount", "box"), "");

  Limits asked;
  asked.memory_max = 64u << 20;
  asked.pids_max = 10;
  std::string w = uncapped_warning(CgroupPolicy::allow_uncapped, asked, "no cgroup2 mount", "box");
  EXPECT_NE(w.find("memory.max 67108864"), std::string::npos) << w;
  EXPECT_NE(w.find("pids.max 10"), std::string::npos) << w;
  EXPECT_NE(w.find("no cgroup2 mount"), std::string::npos) << w;

  Limits cpu;
  cpu.cpus = 0.5;
  EXPECT_NE(uncapped_warning(CgroupPolicy::allow_uncapped, cpu, "x", "run").find("cpu.max"), std::string::npos);
}

TEST(UncappedWarning, BestEffortAlwaysWarnsAndNamesWhatWasAskedFor) {
  Limits defaults;
  EXPECT_NE(uncapped_warning(CgroupPolicy::best_effort, defaults, "why", "box").find("--allow-uncapped"),
            std::string::npos);
  Limits asked;
  asked.pids_max = 7;
  EXPECT_NE(uncapped_warning(CgroupPolicy::best_effort, asked, "why", "run").find("pids.max 7"), std::string::npos);
  EXPECT_EQ(uncapped_warning(CgroupPolicy::none, asked, "why", "box"), "");
}

TEST(UncappedWarning, RequestedCapsList) {
  Limits l;
  EXPECT_EQ(requested_caps(l), "");
  l.memory_max = 1024;
  l.cpuset_cpus = "0-1";
  EXPECT_EQ(requested_caps(l), "memory.max 1024, cpuset.cpus 0-1");
}

}  // namespace
}  // namespace kern
