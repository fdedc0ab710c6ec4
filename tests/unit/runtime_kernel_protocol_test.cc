// The warm kernel's wire formats: request parsing, answer framing, line bounding, output
// bounding, driver packet reassembly and the nonce check on a cell's end.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "runtime/kernel/protocol.h"
#include "tests/unit/seccomp_probe.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

TEST(KernelRequest, RunWithCodeAndTimeout) {
  auto r = parse_request(R"({"op":"run","code":"1+1","timeout":2.5})", nullptr);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->op, Op::run);
  EXPECT_EQ(r->code, "1+1");
  ASSERT_TRUE(r->timeout_s);
  EXPECT_DOUBLE_EQ(*r->timeout_s, 2.5);
}

TEST(KernelRequest, EveryOp) {
  EXPECT_EQ(parse_request(R"({"op":"fire","code":""})", nullptr)->op, Op::fire);
  EXPECT_EQ(parse_request(R"({"op":"poll","cell_id":"c3"})", nullptr)->cell_id, "c3");
  EXPECT_EQ(parse_request(R"({"op":"poll"})", nullptr)->cell_id, "");
  EXPECT_EQ(parse_request(R"({"op":"int"})", nullptr)->op, Op::interrupt);
  EXPECT_EQ(parse_request(R"({"op":"status"})", nullptr)->op, Op::status);
  EXPECT_EQ(parse_request(R"({"op":"stop"})", nullptr)->op, Op::stop);
}

TEST(KernelRequest, ZeroTimeoutMeansNone) {
  auto r = parse_request(R"({"op":"run","code":"x","timeout":0})", nullptr);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->timeout_s);
}

TEST(KernelRequest, BadInputNamesTheProblem) {
  struct Case {
    const char* line;
    const char* says;
  } cases[] = {
      {"not json", "not JSON"},
      {"[1,2]", "JSON object"},
      {R"({"code":"1"})", "missing field \"op\""},
      {R"({"op":"launch"})", "unknown op \"launch\""},
      {R"({"op":"run"})", "missing field \"code\""},
      {R"({"op":"run","code":5})", "\"code\" must be a string"},
      {R"({"op":"run","code":"x","timeout":"soon"})", "\"timeout\" must be a number"},
      {R"({"op":"run","code":"x","timeout":-1})", "between 0 and"},
      {R"({"op":"poll","cell_id":7})", "\"cell_id\" must be a string"},
      {R"({"op":7})", "\"op\" must be a string"},
  };
  for (const auto& c : cases) {
    auto r = parse_request(c.line, nullptr);
    ASSERT_FALSE(r) << c.line;
    EXPECT_NE(r.error().what().find(c.says), std::string::npos) << c.line << " -> " << r.error().what();
  }
}

TEST(KernelRequest, IdIsKeptEvenWhenTheRequestIsBad) {
  json id;
  auto r = parse_request(R"({"id":42,"op":"nope"})", &id);
  ASSERT_FALSE(r);
  EXPECT_EQ(id, 42);
  std::string line = error_line(r.error().message(), id);
  auto j = json::parse(line);
  EXPECT_EQ(j["id"], 42);
  EXPECT_EQ(j["status"], "error");
}

TEST(KernelAnswer, ResultLineHasEveryContractField) {
  CellResult r;
  r.cell_id = "c1";
  r.out = "hi\n";
  r.rc = 0;
  r.results = R"([{"text/plain":"2"}])";
  r.duration_ms = 0.1234567;
  std::string line = result_line(r);
  ASSERT_EQ(line.back(), '\n');
  ASSERT_EQ(line.find('\n'), line.size() - 1);  // exactly one line
  auto j = json::parse(line);
  for (const char* k : {"cell_id", "status", "stdout", "stderr", "rc", "results", "duration_ms", "truncated"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["status"], "done");
  EXPECT_EQ(j["results"][0]["text/plain"], "2");
  EXPECT_EQ(j["rc"], 0);
  EXPECT_FALSE(j.contains("error"));
}

TEST(KernelAnswer, OutputThatLooksLikeTheProtocolStaysInsideItsString) {
  CellResult r;
  r.cell_id = "c2";
  r.out = "\n{\"status\":\"done\",\"cell_id\":\"c9\"}\n";
  r.err = std::string("raw\0bytes\xff\xfe", 11);
  std::string line = result_line(r);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto j = json::parse(line);
  EXPECT_EQ(j["cell_id"], "c2");
  EXPECT_EQ(j["stdout"], r.out);
  // invalid UTF-8 is replaced, the NUL is kept escaped
  std::string err = j["stderr"];
  EXPECT_EQ(err.substr(0, 9), std::string("raw\0bytes", 9));
}

TEST(KernelAnswer, BusyAndDeadAnswersHaveNullCellAndRc) {
  CellResult r;
  r.status = CellStatus::busy;
  r.error = "cell c1 is running";
  auto j = json::parse(result_line(r));
  EXPECT_TRUE(j["cell_id"].is_null());
  EXPECT_TRUE(j["rc"].is_null());
  EXPECT_EQ(j["status"], "busy");
  EXPECT_EQ(j["error"], "cell c1 is running");
}

TEST(KernelLines, SplitsAcrossFeeds) {
  LineReader lr(100);
  lr.feed("{\"a\":", 5);
  std::string line;
  EXPECT_EQ(lr.next(line), LineReader::Next::none);
  lr.feed("1}\n{\"b\":2}\n{", 12);
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "{\"a\":1}");
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "{\"b\":2}");
  EXPECT_EQ(lr.next(line), LineReader::Next::none);
  lr.feed("}\n", 2);
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "{}");
}

TEST(KernelLines, OverlongLineIsReportedOnceInOrderAndSkipped) {
  LineReader lr(10);
  std::string big(25, 'x');
  lr.feed("ok1\n", 4);
  lr.feed(big.data(), 12);  // too long already, no newline yet
  std::string line;
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "ok1");
  ASSERT_EQ(lr.next(line), LineReader::Next::too_long);
  EXPECT_EQ(lr.next(line), LineReader::Next::none);
  lr.feed(big.data(), 13);   // the rest of it
  lr.feed("\nok2\n", 5);
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "ok2");
  EXPECT_EQ(lr.next(line), LineReader::Next::none);
}

TEST(KernelLines, LongLineInOneFeedWithNeighbours) {
  LineReader lr(8);
  std::string in = "a\n" + std::string(50, 'y') + "\nb\n";
  lr.feed(in.data(), in.size());
  std::string line;
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "a");
  EXPECT_EQ(lr.next(line), LineReader::Next::too_long);
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "b");
}

TEST(KernelLines, LineOfExactlyTheLimitIsKept) {
  LineReader lr(4);
  lr.feed("abcd\nabcde\n", 11);
  std::string line;
  ASSERT_EQ(lr.next(line), LineReader::Next::line);
  EXPECT_EQ(line, "abcd");
  EXPECT_EQ(lr.next(line), LineReader::Next::too_long);
}

TEST(KernelOutput, BoundedAndTruncatedPastTheLimit) {
  OutputBuffer b(10);
  b.append("12345", 5);
  EXPECT_FALSE(b.truncated());
  b.append("6789012345", 10);
  EXPECT_TRUE(b.truncated());
  EXPECT_EQ(b.data(), "1234567890");
  EXPECT_EQ(b.dropped(), 5u);
  b.clear();
  EXPECT_FALSE(b.truncated());
  EXPECT_EQ(b.data(), "");
}

TEST(KernelPackets, WholeAndStartMoreEnd) {
  PacketAssembler a(100);
  EXPECT_EQ(a.feed("W{}", 3), PacketAssembler::Feed::complete);
  EXPECT_EQ(a.message(), "{}");
  EXPECT_EQ(a.feed("S{\"a\":", 6), PacketAssembler::Feed::partial);
  EXPECT_EQ(a.feed("M1", 2), PacketAssembler::Feed::partial);
  EXPECT_EQ(a.feed("E2}", 3), PacketAssembler::Feed::complete);
  EXPECT_EQ(a.message(), "{\"a\":12}");
}

TEST(KernelPackets, StrayFragmentsNeverPrefixTheNextMessage) {
  PacketAssembler a(100);
  // continuations without a start are refused
  EXPECT_EQ(a.feed("Mgarbage", 8), PacketAssembler::Feed::bad);
  EXPECT_EQ(a.feed("Egarbage", 8), PacketAssembler::Feed::bad);
  // a start that is never finished is dropped by the next message
  EXPECT_EQ(a.feed("S{\"forged\":", 12), PacketAssembler::Feed::partial);
  EXPECT_EQ(a.feed("W{\"real\":1}", 11), PacketAssembler::Feed::complete);
  EXPECT_EQ(a.message(), "{\"real\":1}");
  EXPECT_EQ(a.dropped_fragments(), 1u);
}

TEST(KernelPackets, BadFlagAndOverflowAreRejected) {
  PacketAssembler a(4);
  EXPECT_EQ(a.feed("X{}", 3), PacketAssembler::Feed::bad);
  EXPECT_EQ(a.feed("", 0), PacketAssembler::Feed::bad);
  EXPECT_EQ(a.feed("S1234", 5), PacketAssembler::Feed::partial);
  EXPECT_EQ(a.feed("E5", 2), PacketAssembler::Feed::bad);  // 5 bytes > 4
  EXPECT_EQ(a.feed("W12", 3), PacketAssembler::Feed::complete);
  EXPECT_EQ(a.message(), "12");
}

TEST(KernelDriver, FrameCarriesIdExactLengthAndTheNonceLast) {
  std::string f = driver_frame("n0nce", "c7", "print('é')\n");
  std::string head = "K2 c7 " + std::to_string(std::string("print('é')\n").size()) + "\n";
  EXPECT_EQ(f.substr(0, head.size()), head);
  // The nonce comes after the code: the driver knows it only once the whole frame is read.
  EXPECT_EQ(f.substr(head.size()), "print('é')\nn0nce\n");
}

TEST(KernelDriver, DoneNeedsTheRunningCellsNonce) {
  auto ok = parse_driver_done(R"({"nonce":"abc","rc":3,"results":[{"text/plain":"1"}]})", "abc");
  ASSERT_TRUE(ok) << ok.error().what();
  EXPECT_EQ(ok->rc, 3);
  EXPECT_EQ(json::parse(ok->results).size(), 1u);
  // a forged end: wrong nonce, missing nonce, a previous cell's nonce
  EXPECT_FALSE(parse_driver_done(R"({"nonce":"abd","rc":0})", "abc"));
  EXPECT_FALSE(parse_driver_done(R"({"rc":0})", "abc"));
  EXPECT_FALSE(parse_driver_done(R"({"nonce":"abc"})", "abc"));
  EXPECT_FALSE(parse_driver_done(R"({"nonce":"abc","rc":0,"results":{}})", "abc"));
  EXPECT_FALSE(parse_driver_done(R"({"nonce":"abc","rc":0,"results":[1]})", "abc"));
  EXPECT_FALSE(parse_driver_done("garbage", "abc"));
}

TEST(KernelDriver, ReadyMessage) {
  EXPECT_TRUE(parse_driver_ready(R"({"ready":true,"lang":"python"})"));
  EXPECT_FALSE(parse_driver_ready(R"({"ready":false})"));
  EXPECT_FALSE(parse_driver_ready("{"));
}

TEST(KernelDriver, ReadyMessageOfTheWrongTypesIsRefusedNotThrown) {
  // A valid JSON line with the wrong types (a driver's bug, or a forgery) must not throw out
  // of the supervisor's loop.
  for (const char* m : {R"({"ready":1})", R"({"ready":"yes"})", R"({"ready":null})", R"({"ready":{}})", "[1]",
                        R"("ready")", "7"}) {
    Result<json> r = fail(ErrorKind::internal, 0, "not run");
    EXPECT_NO_THROW(r = parse_driver_ready(m)) << m;
    EXPECT_FALSE(r) << m;
  }
}

TEST(KernelRequest, AnIdNlohmannCannotHoldIsAnErrorNotAThrow) {
  Result<Request> r = fail(ErrorKind::internal, 0, "not run");
  EXPECT_NO_THROW(r = parse_request(R"({"op":"run","code":"1","id":1e999})", nullptr));
  EXPECT_FALSE(r);
}

TEST(KernelNonce, RandomHex) {
  auto a = make_nonce(), b = make_nonce();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->find_first_not_of("0123456789abcdef"), std::string::npos);
}

// A source that hands out 0, 1, 2, ... five bytes per call, then runs dry after `g_limit`.
size_t g_given = 0, g_limit = 0;
ssize_t counting_source(void* buf, size_t len) {
  size_t n = std::min<size_t>({len, 5, g_limit - g_given});
  for (size_t i = 0; i < n; ++i) static_cast<unsigned char*>(buf)[i] = static_cast<unsigned char>(g_given + i);
  g_given += n;
  return static_cast<ssize_t>(n);
}
ssize_t failing_source(void*, size_t) {
  errno = ENOSYS;
  return -1;
}

TEST(KernelNonce, ShortReadsAreJoinedAndARunDrySourceIsAnError) {
  g_given = 0;
  g_limit = 40;  // two nonces and 8 bytes: the third nonce has too little, and is refused
  NoncePool pool(counting_source);
  auto a = pool.next(), b = pool.next();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, "000102030405060708090a0b0c0d0e0f");
  EXPECT_EQ(*b, "101112131415161718191a1b1c1d1e1f");
  auto c = pool.next();
  EXPECT_FALSE(c) << *c;
  EXPECT_FALSE(pool.next());
}

TEST(KernelNonce, AFailingSourceIsAnErrorNeverBytesNobodyWrote) {
  NoncePool pool(failing_source);
  for (int i = 0; i < 3; ++i) {
    auto n = pool.next();
    ASSERT_FALSE(n) << *n;
    EXPECT_EQ(n.error().sys_errno(), ENOSYS);
  }
}

TEST(KernelNonce, GetrandomRefusedFallsBackToUrandom) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  // Under a filter that answers getrandom with ENOSYS (an old kernel, a seccomp profile).
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {static_cast<unsigned short>(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
      _exit(90);
    char probe;
    if (syscall(SYS_getrandom, &probe, 1, 0) != -1 || errno != ENOSYS) _exit(91);  // the filter works
    auto a = make_nonce(), b = make_nonce();
    if (!a || !b) _exit(92);
    _exit(a->size() == 32 && *a != *b && *a != std::string(32, '0') ? 0 : 93);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace kern::kernel
