// --restart's policy: the spellings, which exits are answered with a new box, the back-off.
#include <gtest/gtest.h>

#include "runtime/detached/restart_policy.h"

namespace kern {
namespace {

TEST(RestartPolicy, ParsesDockersSpellings) {
  EXPECT_EQ(parse_restart_policy("no")->mode, RestartMode::no);
  EXPECT_EQ(parse_restart_policy("always")->mode, RestartMode::always);
  EXPECT_EQ(parse_restart_policy("unless-stopped")->mode, RestartMode::unless_stopped);
  auto p = parse_restart_policy("on-failure:3");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->mode, RestartMode::on_failure);
  EXPECT_EQ(p->max_restarts, 3u);
  EXPECT_EQ(restart_policy_name(*p), "on-failure:3");
  EXPECT_EQ(parse_restart_policy("on-failure")->max_restarts, 0u);
  for (const char* bad : {"", "yes", "on-failure:", "on-failure:0", "on-failure:x", "always:2", "on-failure:-1"}) {
    auto b = parse_restart_policy(bad);
    ASSERT_FALSE(b.has_value()) << bad;
    EXPECT_EQ(b.error().kind(), ErrorKind::usage) << bad;
    EXPECT_FALSE(b.error().hint().empty()) << bad;
  }
}

TEST(RestartPolicy, WhichExitsGetANewBox) {
  RestartPolicy on_failure{RestartMode::on_failure, 2};
  EXPECT_TRUE(restart_wanted(on_failure, 1, 0, false));
  EXPECT_TRUE(restart_wanted(on_failure, 137, 1, false));
  EXPECT_FALSE(restart_wanted(on_failure, 1, 2, false));   // the limit
  EXPECT_FALSE(restart_wanted(on_failure, 0, 0, false));   // a success
  EXPECT_FALSE(restart_wanted(on_failure, 1, 0, true));    // kern stop
  RestartPolicy always{RestartMode::always, 0};
  EXPECT_TRUE(restart_wanted(always, 0, 1000, false));
  EXPECT_FALSE(restart_wanted(always, 137, 0, true));
  EXPECT_FALSE(restart_wanted(RestartPolicy{}, 1, 0, false));
}

TEST(RestartPolicy, BackOffDoublesFrom100MsUpToAMinute) {
  EXPECT_EQ(restart_delay_ms(0), 100u);
  EXPECT_EQ(restart_delay_ms(1), 100u);
  EXPECT_EQ(restart_delay_ms(2), 200u);
  EXPECT_EQ(restart_delay_ms(3), 400u);
  EXPECT_EQ(restart_delay_ms(10), 51200u);
  EXPECT_EQ(restart_delay_ms(11), kRestartMaxDelayMs);
  EXPECT_EQ(restart_delay_ms(1000), kRestartMaxDelayMs);
}

}  // namespace
}  // namespace kern
