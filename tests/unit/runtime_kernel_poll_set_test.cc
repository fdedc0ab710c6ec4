// The supervisor loop's poll(2) over a persistent epoll set (runtime/kernel/poll_set.h): what it
// reports is what poll reports, round after round, including for files epoll refuses and for fd
// numbers that come back as other files.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "runtime/kernel/poll_set.h"

namespace kern::kernel {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    r = p[0];
    w = p[1];
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
};

short poll_one(int fd, short events) {
  struct pollfd p = {fd, events, 0};
  EXPECT_GE(::poll(&p, 1, 0), 0);
  return p.revents;
}

TEST(KernelPollSet, ReportsWhatPollReportsRoundAfterRound) {
  auto ps = PollSet::create();
  ASSERT_TRUE(ps);
  Pipe a, b;
  for (int round = 0; round < 3; ++round) {
    ps->clear();
    size_t ia = ps->add(1, a.r, POLLIN);
    size_t ib = ps->add(2, b.r, POLLIN);
    size_t iw = ps->add(3, b.w, POLLOUT);
    size_t in = ps->add(4, -1, POLLIN);  // ignored, as poll ignores it
    if (round == 1) {
      ASSERT_EQ(::write(a.w, "x", 1), 1);
    }
    ASSERT_GE(ps->wait(0), 0);
    EXPECT_EQ(ps->revents(ia), poll_one(a.r, POLLIN)) << round;
    EXPECT_EQ(ps->revents(ib), 0) << round;
    EXPECT_EQ(ps->revents(iw), POLLOUT) << round;
    EXPECT_EQ(ps->revents(in), 0) << round;
  }
  // The read end's POLLHUP once the writer is gone; the writer's POLLERR once the reader is.
  ::close(a.w);
  a.w = -1;
  ::close(b.r);
  b.r = -1;
  ps->clear();
  size_t ia = ps->add(1, a.r, POLLIN);
  size_t iw = ps->add(3, b.w, 0);
  ASSERT_GE(ps->wait(0), 0);
  EXPECT_EQ(ps->revents(ia), poll_one(a.r, POLLIN));
  EXPECT_TRUE(ps->revents(ia) & POLLHUP);
  EXPECT_EQ(ps->revents(iw), POLLERR);
}

TEST(KernelPollSet, AFileEpollRefusesIsReadyAsPollSaysAndDevNullToo) {
  char path[] = "/tmp/kern-poll-set-XXXXXX";
  int f = ::mkstemp(path);
  ASSERT_GE(f, 0);
  ::unlink(path);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(null, 0);
  auto ps = PollSet::create();
  ASSERT_TRUE(ps);
  ps->clear();
  size_t i_in = ps->add(1, f, POLLIN);
  size_t i_gone = ps->add(2, f, 0);  // serve's stdout a file: never "gone"
  size_t i_null = ps->add(3, null, POLLIN);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(ps->wait(3000), 2);  // at once, as poll
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(ps->revents(i_in), poll_one(f, POLLIN));
  EXPECT_EQ(ps->revents(i_gone), 0);
  EXPECT_EQ(ps->revents(i_null), poll_one(null, POLLIN));
  ::close(f);
  ::close(null);
}

TEST(KernelPollSet, AnFdNumberThatComesBackAsAnotherFileIsWatchedUnderItsNewKey) {
  auto ps = PollSet::create();
  ASSERT_TRUE(ps);
  Pipe* a = new Pipe;
  int number = a->r;
  ps->clear();
  ps->add(10, a->r, POLLIN);
  ASSERT_EQ(ps->wait(0), 0);
  delete a;  // closed: its number is free
  Pipe b;    // the same number again, another file
  ASSERT_EQ(b.r, number);
  ASSERT_EQ(::write(b.w, "y", 1), 1);
  ps->clear();
  size_t i = ps->add(11, b.r, POLLIN);  // a new key: another connection
  ASSERT_EQ(ps->wait(0), 1);
  EXPECT_EQ(ps->revents(i), POLLIN);
  // Dropped from the set: no longer reported, though still readable.
  ps->clear();
  size_t j = ps->add(11, -1, POLLIN);
  EXPECT_EQ(ps->wait(0), 0);
  EXPECT_EQ(ps->revents(j), 0);
  // Wanted again under its key: reported again.
  ps->clear();
  size_t k = ps->add(11, b.r, POLLIN);
  EXPECT_EQ(ps->wait(0), 1);
  EXPECT_EQ(ps->revents(k), POLLIN);
}

TEST(KernelPollSet, ChangedEventsAreApplied) {
  auto ps = PollSet::create();
  ASSERT_TRUE(ps);
  Pipe p;
  ps->clear();
  size_t i = ps->add(1, p.w, 0);
  ASSERT_EQ(ps->wait(0), 0);
  EXPECT_EQ(ps->revents(i), 0);
  ps->clear();
  i = ps->add(1, p.w, POLLOUT);
  ASSERT_EQ(ps->wait(0), 1);
  EXPECT_EQ(ps->revents(i), POLLOUT);
}

}  // namespace
}  // namespace kern::kernel
