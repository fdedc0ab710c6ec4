// The --timeout clock both watches of a box use (runtime/box_timeout.h): SIGTERM when it fires,
// SIGKILL when it fires again after the grace, nothing after that.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/timerfd.h>

#include <csignal>
#include <vector>

#include "runtime/box_timeout.h"

namespace kern {
namespace {

TEST(TimeoutClock, NoneWithoutATimeout) {
  auto c = TimeoutClock::start(0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fd(), -1);
  EXPECT_FALSE(c->timed_out());
}

TEST(TimeoutClock, TermThenKillAfterTheGrace) {
  auto c = TimeoutClock::start(1);
  ASSERT_TRUE(c) << c.error().what();
  ASSERT_GE(c->fd(), 0);
  struct pollfd p = {c->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  std::vector<int> sent;
  c->fired([&](int sig) { sent.push_back(sig); });
  EXPECT_EQ(sent, std::vector<int>{SIGTERM});
  EXPECT_TRUE(c->timed_out());
  EXPECT_FALSE(c->killed_after_grace());
  // Armed again for the grace, not for the timeout.
  struct itimerspec its;
  ASSERT_EQ(::timerfd_gettime(c->fd(), &its), 0);
  uint64_t left_ms = static_cast<uint64_t>(its.it_value.tv_sec) * 1000 + static_cast<uint64_t>(its.it_value.tv_nsec) / 1000000;
  EXPECT_GT(left_ms, kTimeoutGraceMs - 500);
  EXPECT_LE(left_ms, kTimeoutGraceMs);
  // The grace passes (fired now rather than waited for): SIGKILL, then nothing more.
  arm_timer(c->fd(), 1);
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  c->fired([&](int sig) { sent.push_back(sig); });
  EXPECT_EQ(sent, (std::vector<int>{SIGTERM, SIGKILL}));
  EXPECT_TRUE(c->killed_after_grace());
  arm_timer(c->fd(), 1);
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  c->fired([&](int sig) { sent.push_back(sig); });
  EXPECT_EQ(sent.size(), 2u);
}

}  // namespace
}  // namespace kern
