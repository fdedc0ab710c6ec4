// Health checks' state machine (Docker's rules) and the --health-on-failure spellings.
#include <gtest/gtest.h>

#include "runtime/detached/health.h"

namespace kern {
namespace {

HealthResult exit_with(int code) {
  HealthResult r;
  r.exit_code = code;
  return r;
}

TEST(Health, StartingHealthyUnhealthyAfterRetriesInARow) {
  HealthConfig c;
  c.test = {"true"};
  c.retries = 2;
  HealthState s;
  EXPECT_EQ(s.status, "starting");
  EXPECT_FALSE(record_probe(s, c, exit_with(1), 100));  // one failure: still starting
  EXPECT_TRUE(record_probe(s, c, exit_with(0), 200));
  EXPECT_EQ(s.status, "healthy");
  EXPECT_FALSE(record_probe(s, c, exit_with(1), 300));
  EXPECT_EQ(s.failing_streak, 1u);
  EXPECT_TRUE(record_probe(s, c, exit_with(-1), 400));  // a timeout is a failure
  EXPECT_EQ(s.status, "unhealthy");
  EXPECT_TRUE(record_probe(s, c, exit_with(0), 500));
  EXPECT_EQ(s.status, "healthy");
  EXPECT_EQ(s.failing_streak, 0u);
}

TEST(Health, FailuresInTheStartPeriodDoNotCount) {
  HealthConfig c;
  c.test = {"true"};
  c.retries = 1;
  c.start_period_ms = 1000;
  HealthState s;
  EXPECT_FALSE(record_probe(s, c, exit_with(1), 200));
  EXPECT_FALSE(record_probe(s, c, exit_with(1), 900));
  EXPECT_EQ(s.status, "starting");
  EXPECT_EQ(s.failing_streak, 0u);
  EXPECT_TRUE(record_probe(s, c, exit_with(1), 1000));
  EXPECT_EQ(s.status, "unhealthy");
}

TEST(Health, KeepsTheLastFiveResultsAndCutsLongOutput) {
  HealthConfig c;
  c.test = {"true"};
  HealthState s;
  for (int i = 0; i < 7; ++i) {
    HealthResult r = exit_with(i);
    r.output = std::string(kHealthOutputMax + 10, 'x');
    record_probe(s, c, r, 0);
  }
  ASSERT_EQ(s.log.size(), kHealthLogSize);
  EXPECT_EQ(s.log.front().exit_code, 2);
  EXPECT_EQ(s.log.back().output.size(), kHealthOutputMax);
  EXPECT_NE(health_json(s).find("\"status\":\"unhealthy\""), std::string::npos);
}

TEST(Health, ActionsArePodmans) {
  EXPECT_EQ(*parse_health_action("restart"), HealthAction::restart);
  EXPECT_EQ(std::string(health_action_name(HealthAction::stop)), "stop");
  auto bad = parse_health_action("reboot");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind(), ErrorKind::usage);
}

}  // namespace
}  // namespace kern
