// Sizes, CPU amounts, pids limits and CPU lists (profiles/units.h).
#include <gtest/gtest.h>

#include "profiles/units.h"

namespace kern::profiles {
namespace {

TEST(Units, SizesAreBinaryWithOptionalB) {
  EXPECT_EQ(*parse_size("4096"), 4096u);
  EXPECT_EQ(*parse_size("512m"), 512 * kMiB);
  EXPECT_EQ(*parse_size("512M"), 512 * kMiB);
  EXPECT_EQ(*parse_size("512mb"), 512 * kMiB);
  EXPECT_EQ(*parse_size("512MiB"), 512 * kMiB);
  EXPECT_EQ(*parse_size("2g"), 2 * kGiB);
  EXPECT_EQ(*parse_size("1k"), 1024u);
  EXPECT_EQ(*parse_size("3t"), 3 * kTiB);
  EXPECT_EQ(*parse_size("1.5g"), kGiB + kGiB / 2);
  EXPECT_EQ(*parse_size("0.5k"), 512u);
  EXPECT_EQ(*parse_size("10b"), 10u);
  EXPECT_EQ(*parse_size("1 m"), kMiB);  // a space before the unit, as "256 MB" (kern.toml(5))
}

TEST(Units, BadSizesAreRejected) {
  for (const char* s : {"", "m", "-1m", "1x", "1 m ", " 1m", "1.m", ".5m", "1.5", "1mm", "1ib", "0x10", "1e3",
                        "99999999999999999999", "20000000t", "1.0000000001g"}) {
    auto r = parse_size(s);
    EXPECT_FALSE(r) << s;
    if (!r) {
      EXPECT_EQ(r.error().kind(), ErrorKind::config) << s;
    }
  }
}

TEST(Units, MemoryBoundsAndTheBareNumberHint) {
  EXPECT_EQ(*parse_memory("32m"), 32 * kMiB);
  auto tiny = parse_memory("512");
  ASSERT_FALSE(tiny);
  EXPECT_NE(tiny.error().message().find("did you mean 512m?"), std::string::npos) << tiny.error().message();
  EXPECT_FALSE(parse_memory("0"));
  EXPECT_FALSE(parse_memory("2000t"));
  EXPECT_TRUE(parse_memory("1m"));
}

TEST(Units, CpusAreDecimalsInRange) {
  EXPECT_DOUBLE_EQ(*parse_cpus("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_cpus("0.2"), 0.2);
  EXPECT_DOUBLE_EQ(*parse_cpus("4"), 4.0);
  EXPECT_DOUBLE_EQ(*parse_cpus("0.01"), 0.01);
  for (const char* s : {"", "0", "0.001", "-1", "1,5", "1.5x", "inf", "nan", "9000", ".5", "1e2"})
    EXPECT_FALSE(parse_cpus(s)) << s;
}

TEST(Units, PidsLimit) {
  EXPECT_EQ(*parse_pids("32"), 32u);
  EXPECT_EQ(*parse_pids("2"), 2u);
  for (const char* s : {"1", "0", "-3", "3.5", "x", "4194305"}) EXPECT_FALSE(parse_pids(s)) << s;
}

TEST(Units, CpuLists) {
  EXPECT_EQ(*parse_cpu_list("0-3,5"), (std::vector<unsigned>{0, 1, 2, 3, 5}));
  EXPECT_EQ(*parse_cpu_list("7"), (std::vector<unsigned>{7}));
  EXPECT_EQ(format_cpu_list(*parse_cpu_list("0-3,5,7-8")), "0-3,5,7-8");
  for (const char* s : {"", "3-1", "1,1", "2,1", "0-", "-1", "a", "1,,2", "0-3,", "9000", " 1"})
    EXPECT_FALSE(parse_cpu_list(s)) << s;
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_size(512 * kMiB), "512 MiB");
  EXPECT_EQ(format_size(kGiB + kGiB / 2), "1.5 GiB");
  EXPECT_EQ(format_size(100), "100 B");
  EXPECT_EQ(format_cpus(1.5), "1.5");
  EXPECT_EQ(format_cpus(0.2), "0.2");
  EXPECT_EQ(format_cpus(2), "2");
}

}  // namespace
}  // namespace kern::profiles

namespace kern::profiles {
namespace {

TEST(Units, TimeoutDurations) {
  EXPECT_EQ(*parse_duration_ms("2"), 2000u);  // a bare number stays seconds
  EXPECT_EQ(*parse_duration_ms("2s"), 2000u);
  EXPECT_EQ(*parse_duration_ms("500ms"), 500u);
  EXPECT_EQ(*parse_duration_ms("1m"), 60000u);
  EXPECT_EQ(*parse_duration_ms("1.5"), 1500u);
  EXPECT_EQ(*parse_duration_ms("1h"), 3600000u);
  EXPECT_EQ(*parse_duration_ms("0"), 0u);
  for (const char* bad : {"", "s", "2x", "-1", "1.0005", "2 s", "1e3", "31d", "721h"})
    EXPECT_FALSE(parse_duration_ms(bad).has_value()) << bad;
  EXPECT_EQ(format_duration_ms(2000), "2s");
  EXPECT_EQ(format_duration_ms(1500), "1500ms");
}

}  // namespace
}  // namespace kern::profiles
