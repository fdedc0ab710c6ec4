// The box's typed channel: every message round-trips; unknown, short, long and cut frames are
// refused; the reader takes frames across reads and refuses a frame cut by end-of-file.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "runtime/channel.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"

namespace kern {
namespace {

std::string frame_of(size_t (*enc)(char*, size_t)) {
  char buf[kChannelFrameMax];
  size_t n = enc(buf, sizeof buf);
  return std::string(buf, n);
}

ChannelMsg decode_one(const std::string& f) {
  size_t used = 0;
  auto m = decode_channel_frame(f, &used);
  EXPECT_TRUE(m) << (m ? "" : m.error().what());
  EXPECT_TRUE(m && m->has_value());
  EXPECT_EQ(used, f.size());
  return m && m->has_value() ? **m : ChannelMsg{};
}

TEST(ChannelMsg, ExecOkRoundTrips) {
  EXPECT_EQ(decode_one(frame_of(encode_exec_ok)).type, ChannelMsgType::exec_ok);
}

TEST(ChannelMsg, HeldRoundTripsAndTakesNoPayload) {
  std::string f = frame_of(encode_held);
  EXPECT_EQ(decode_one(f).type, ChannelMsgType::held);
  std::string with_payload = f;
  with_payload[6] = 1;  // payload length 1
  with_payload.push_back('x');
  size_t used = 0;
  EXPECT_FALSE(decode_channel_frame(with_payload, &used).has_value());
}

TEST(ChannelMsg, BeforePivotRoundTripsAndTakesNoPayload) {
  std::string f = frame_of(encode_before_pivot);
  EXPECT_EQ(decode_one(f).type, ChannelMsgType::before_pivot);
  std::string with_payload = f;
  with_payload[6] = 1;
  with_payload.push_back('x');
  size_t used = 0;
  EXPECT_FALSE(decode_channel_frame(with_payload, &used).has_value());
}

TEST(ChannelMsg, StepSkippedRoundTrips) {
  char buf[kChannelFrameMax];
  std::string f(buf, encode_step_skipped(buf, sizeof buf, "sysfs-ro /sys", EPERM));
  ChannelMsg m = decode_one(f);
  EXPECT_EQ(m.type, ChannelMsgType::step_skipped);
  EXPECT_EQ(m.step, "sysfs-ro /sys");
  EXPECT_EQ(m.err, EPERM);
}

TEST(ChannelMsg, SetupFailedCarriesTheWholeError) {
  char buf[kChannelFrameMax];
  std::string f(buf, encode_setup_failed(buf, sizeof buf, ErrorKind::workload, ENOENT, "execve", "nosuch"));
  ChannelMsg m = decode_one(f);
  ASSERT_EQ(m.type, ChannelMsgType::setup_failed);
  ASSERT_TRUE(m.error);
  EXPECT_EQ(m.error->kind(), ErrorKind::workload);
  EXPECT_EQ(m.error->sys_errno(), ENOENT);
  EXPECT_EQ(m.error->what(), "execve \"nosuch\": no such file or directory (ENOENT)");
}

TEST(ChannelMsg, WorkloadStatusRoundTrips) {
  char buf[kChannelFrameMax];
  std::string f(buf, encode_workload_status(buf, sizeof buf, 9));
  ChannelMsg m = decode_one(f);
  EXPECT_EQ(m.type, ChannelMsgType::workload_status);
  EXPECT_EQ(m.wait_status, 9);
}

TEST(ChannelMsg, AnUnknownTypeIsRefused) {
  std::string f = frame_of(encode_exec_ok);
  f[4] = 99;
  size_t used = 0;
  auto m = decode_channel_frame(f, &used);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().sys_errno(), EPROTO);
}

TEST(ChannelMsg, ABadMagicIsRefused) {
  std::string f = frame_of(encode_exec_ok);
  f[0] ^= 0x55;
  size_t used = 0;
  EXPECT_FALSE(decode_channel_frame(f, &used));
}

TEST(ChannelMsg, APayloadOfTheWrongLengthIsRefused) {
  char buf[kChannelFrameMax];
  std::string f(buf, encode_workload_status(buf, sizeof buf, 0));
  // Claim 2 bytes of payload for a status that needs 4.
  f[6] = 2;
  f.resize(8 + 2);
  size_t used = 0;
  EXPECT_FALSE(decode_channel_frame(f, &used));
  // exec_ok with a payload.
  std::string g = frame_of(encode_exec_ok) + "x";
  g[6] = 1;
  EXPECT_FALSE(decode_channel_frame(g, &used));
}

TEST(ChannelMsg, APartialFrameAsksForMore) {
  char buf[kChannelFrameMax];
  std::string f(buf, encode_step_skipped(buf, sizeof buf, "x", EACCES));
  for (size_t cut = 0; cut < f.size(); ++cut) {
    size_t used = 7;
    auto m = decode_channel_frame(std::string_view(f).substr(0, cut), &used);
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->has_value());
    EXPECT_EQ(used, 0u);
  }
}

TEST(ChannelReader, ReadsFramesInOrderThenEndOfFile) {
  UniqueFd w;
  auto r = sys::make_pipe(O_CLOEXEC, &w);
  ASSERT_TRUE(r);
  send_step_skipped(w.get(), "sysfs-ro /sys", EPERM);
  send_exec_ok(w.get());
  send_workload_status(w.get(), 2 << 8);
  w.reset();
  ChannelReader rd(r->get());
  auto a = rd.next();
  ASSERT_TRUE(a && *a);
  EXPECT_EQ((*a)->type, ChannelMsgType::step_skipped);
  auto b = rd.next();
  ASSERT_TRUE(b && *b);
  EXPECT_EQ((*b)->type, ChannelMsgType::exec_ok);
  auto c = rd.next();
  ASSERT_TRUE(c && *c);
  EXPECT_EQ((*c)->wait_status, 2 << 8);
  auto d = rd.next();
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->has_value());
}

TEST(ChannelReader, AFrameCutByEndOfFileIsAnError) {
  UniqueFd w;
  auto r = sys::make_pipe(O_CLOEXEC, &w);
  ASSERT_TRUE(r);
  char buf[kChannelFrameMax];
  size_t n = encode_setup_failed(buf, sizeof buf, ErrorKind::setup, EPERM, "mount", "/proc");
  ASSERT_EQ(::write(w.get(), buf, n - 3), static_cast<ssize_t>(n - 3));
  w.reset();
  ChannelReader rd(r->get());
  auto m = rd.next();
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().kind(), ErrorKind::internal);
}

TEST(ChannelReader, GarbageIsRejectedNotTrusted) {
  UniqueFd w;
  auto r = sys::make_pipe(O_CLOEXEC, &w);
  ASSERT_TRUE(r);
  ASSERT_EQ(::write(w.get(), "hello, kern", 11), 11);
  w.reset();
  ChannelReader rd(r->get());
  EXPECT_FALSE(rd.next());
}

TEST(ChannelReader, PollNextNeverWaits) {
  UniqueFd w;
  auto r = sys::make_pipe(O_CLOEXEC, &w);
  ASSERT_TRUE(r);
  ChannelReader rd(r->get());
  auto m = rd.poll_next();
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->has_value());
  EXPECT_FALSE(rd.at_eof());
  send_exec_ok(w.get());
  auto n = rd.poll_next();
  ASSERT_TRUE(n && *n);
  EXPECT_EQ((*n)->type, ChannelMsgType::exec_ok);
}

}  // namespace
}  // namespace kern

namespace kern {
namespace {

// The seccomp listener's frame brings its descriptor on a socket; on the next frames, and on a
// pipe, the reader works as before.
TEST(ChannelReader, SeccompListenerFrameBringsItsDescriptor) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd reader_end(sv[0]), writer_end(sv[1]);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd pr(p[0]), pw(p[1]);
  ASSERT_EQ(send_seccomp_listener(writer_end.get(), pr.get()), 0);
  send_exec_ok(writer_end.get());
  writer_end.reset();
  ChannelReader reader(reader_end.get());
  auto m = reader.next();
  ASSERT_TRUE(m && *m) << (m ? "eof" : m.error().what());
  EXPECT_EQ((*m)->type, ChannelMsgType::seccomp_listener);
  UniqueFd got = reader.take_fd();
  ASSERT_TRUE(got);
  struct stat a {}, b {};
  ASSERT_EQ(::fstat(got.get(), &a), 0);
  ASSERT_EQ(::fstat(pr.get(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_FALSE(reader.take_fd());
  m = reader.next();
  ASSERT_TRUE(m && *m);
  EXPECT_EQ((*m)->type, ChannelMsgType::exec_ok);
  m = reader.next();
  ASSERT_TRUE(m);
  EXPECT_FALSE(*m);
}

}  // namespace
}  // namespace kern
