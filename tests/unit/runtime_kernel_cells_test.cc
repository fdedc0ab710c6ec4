// The warm kernel's cell state machine (runtime/kernel/cell_machine.h): every transition, busy
// and dead answers, deadlines and their grace, the confirmation of a cell's end by the driver's
// main thread, REPL cells and the results kept for poll.
#include <gtest/gtest.h>

#include <sys/syscall.h>

#include "runtime/kernel/cell_machine.h"
#include "runtime/kernel/driver_watch.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

constexpr uint64_t kMs = 1000000ull;
const std::string kNonce = "0123456789abcdef0123456789abcdef";

std::string end_msg(const std::string& nonce, int rc, json results = json::array()) {
  return json{{"nonce", nonce}, {"rc", rc}, {"results", results}}.dump();
}

CellMachine ready_machine(CellMachineConfig cfg = {}) {
  CellMachine m(cfg);
  m.ready();
  return m;
}

CellMachineConfig confirming() {
  CellMachineConfig c;
  c.confirm_idle = true;
  return c;
}

TEST(KernelCells, StartsStartingAndReadyMakesItIdle) {
  CellMachine m({});
  EXPECT_EQ(m.state(), KernelState::starting);
  Actions a = m.submit("1", std::nullopt, kNonce, 0);
  ASSERT_TRUE(a.refused);
  EXPECT_EQ(a.refused->status, CellStatus::busy);
  EXPECT_TRUE(a.write.empty());
  m.ready();
  EXPECT_EQ(m.state(), KernelState::idle);
  EXPECT_EQ(state_name(m.state()), "idle");
}

TEST(KernelCells, SubmitWritesTheFrameAndArmsTheDeadline) {
  CellMachine m = ready_machine();
  Actions a = m.submit("x = 1", 2.5, kNonce, 10 * kMs);
  EXPECT_FALSE(a.refused);
  EXPECT_EQ(a.write, driver_frame(kNonce, "c1", "x = 1"));
  ASSERT_TRUE(a.arm_ns);
  EXPECT_EQ(*a.arm_ns, 2500 * kMs);
  EXPECT_EQ(m.state(), KernelState::running);
  EXPECT_EQ(m.cell_id(), "c1");
  EXPECT_EQ(m.cells(), 1u);
}

TEST(KernelCells, NoTimeoutArmsNothing) {
  CellMachine m = ready_machine();
  EXPECT_FALSE(m.submit("1", std::nullopt, kNonce, 0).arm_ns);
}

TEST(KernelCells, BusyWhileACellRunsNeverQueued) {
  CellMachine m = ready_machine();
  m.submit("1", std::nullopt, kNonce, 0);
  Actions a = m.submit("2", std::nullopt, "other", 0);
  ASSERT_TRUE(a.refused);
  EXPECT_EQ(a.refused->status, CellStatus::busy);
  EXPECT_TRUE(a.refused->cell_id.empty());
  EXPECT_NE(a.refused->error.find("cell c1 is running"), std::string::npos) << a.refused->error;
  EXPECT_TRUE(a.write.empty());
  EXPECT_EQ(m.cell_id(), "c1");
  EXPECT_EQ(m.cells(), 1u);
}

TEST(KernelCells, BusyWhileInterrupting) {
  CellMachine m = ready_machine();
  m.submit("1", 1.0, kNonce, 0);
  m.timer(1000 * kMs);
  ASSERT_EQ(m.state(), KernelState::interrupting);
  Actions a = m.submit("2", std::nullopt, "other", 0);
  ASSERT_TRUE(a.refused);
  EXPECT_EQ(a.refused->status, CellStatus::busy);
}

TEST(KernelCells, OutputBelongsToTheRunningCellOnly) {
  CellMachine m = ready_machine();
  m.output(false, "before", 6);
  m.submit("1", std::nullopt, kNonce, 0);
  m.output(false, "out", 3);
  m.output(true, "err", 3);
  Actions a = m.end_message(end_msg(kNonce, 0), DriverView::between, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->out, "out");
  EXPECT_EQ(a.finished->err, "err");
  m.output(false, "after", 5);
  m.submit("2", std::nullopt, kNonce, 0);
  EXPECT_EQ(m.cell_out(), "");
}

TEST(KernelCells, OutputPastTheLimitIsTruncated) {
  CellMachineConfig c;
  c.output_limit = 4;
  CellMachine m = ready_machine(c);
  m.submit("1", std::nullopt, kNonce, 0);
  m.output(false, "123456", 6);
  Actions a = m.end_message(end_msg(kNonce, 0), DriverView::between, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->out, "1234");
  EXPECT_TRUE(a.finished->truncated);
}

TEST(KernelCells, EndWithTheNonceEndsTheCell) {
  CellMachine m = ready_machine();
  m.submit("1", std::nullopt, kNonce, 5 * kMs);
  Actions a = m.end_message(end_msg(kNonce, 3, json::array({{{"text/plain", "2"}}})), DriverView::between,
                            7 * kMs);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->cell_id, "c1");
  EXPECT_EQ(a.finished->status, CellStatus::done);
  EXPECT_EQ(a.finished->rc, 3);
  EXPECT_EQ(json::parse(a.finished->results), json::array({{{"text/plain", "2"}}}));
  EXPECT_DOUBLE_EQ(a.finished->duration_ms, 2.0);
  EXPECT_FALSE(a.disarm) << "no deadline was armed";
  EXPECT_EQ(m.state(), KernelState::idle);
  EXPECT_TRUE(m.cell_id().empty());
}

TEST(KernelCells, EndWithAnotherNonceOrWhenIdleIsRefused) {
  CellMachine m = ready_machine();
  EXPECT_FALSE(m.end_message(end_msg(kNonce, 0), DriverView::waiting, 0).finished);
  EXPECT_EQ(m.refused_claims(), 1u);
  m.submit("1", std::nullopt, kNonce, 0);
  EXPECT_FALSE(m.end_message(end_msg("ffffffffffffffffffffffffffffffff", 0), DriverView::waiting, 0).finished);
  EXPECT_FALSE(m.end_message("not json", DriverView::waiting, 0).finished);
  EXPECT_EQ(m.refused_claims(), 3u);
  EXPECT_EQ(m.state(), KernelState::running);
}

TEST(KernelCells, ConfirmedEndWaitsForTheMainThreadAtItsRead) {
  CellMachine m = ready_machine(confirming());
  m.submit("1", std::nullopt, kNonce, 0);
  Actions a = m.end_message(end_msg(kNonce, 4), DriverView::between, 0);
  EXPECT_FALSE(a.finished);
  EXPECT_TRUE(a.check_driver);
  a = m.driver_seen(DriverView::between, 0);
  EXPECT_FALSE(a.finished);
  EXPECT_TRUE(a.check_driver);
  a = m.driver_seen(DriverView::waiting, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::done);
  EXPECT_EQ(a.finished->rc, 4);
  EXPECT_EQ(m.state(), KernelState::idle);
}

TEST(KernelCells, ClaimWhileTheMainThreadIsInsideTheCellIsRefused) {
  // A thread an earlier cell left behind read the nonce and sent an end while the cell sleeps.
  CellMachine m = ready_machine(confirming());
  m.submit("1", std::nullopt, kNonce, 0);
  Actions a = m.end_message(end_msg(kNonce, 0, json::array({{{"text/plain", "'forged'"}}})), DriverView::inside, 0);
  EXPECT_FALSE(a.finished);
  EXPECT_EQ(m.refused_claims(), 1u);
  EXPECT_FALSE(m.driver_seen(DriverView::inside, 0).finished);
  // The driver's own end, then its wait.
  m.end_message(end_msg(kNonce, 0, json::array({{{"text/plain", "'real'"}}})), DriverView::between, 0);
  a = m.driver_seen(DriverView::waiting, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::done);
  EXPECT_EQ(json::parse(a.finished->results), json::array({{{"text/plain", "'real'"}}}));
}

TEST(KernelCells, TwoCandidateEndsMakeTheResultUnknown) {
  CellMachine m = ready_machine(confirming());
  m.submit("1", std::nullopt, kNonce, 0);
  m.output(false, "kept", 4);
  m.end_message(end_msg(kNonce, 0), DriverView::between, 0);
  m.end_message(end_msg(kNonce, 9), DriverView::waiting, 0);
  Actions a = m.driver_seen(DriverView::waiting, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::error);
  EXPECT_FALSE(a.finished->rc);
  EXPECT_EQ(json::parse(a.finished->results), json::array());
  EXPECT_EQ(a.finished->out, "kept");
  EXPECT_NE(a.finished->error.find("claimed 2 times"), std::string::npos) << a.finished->error;
  EXPECT_EQ(m.state(), KernelState::idle) << "the state is kept";
}

TEST(KernelCells, WaitingWithOnlyARefusedClaimIsAnError) {
  CellMachine m = ready_machine(confirming());
  m.submit("1", std::nullopt, kNonce, 0);
  m.end_message(end_msg(kNonce, 0), DriverView::inside, 0);
  Actions a = m.driver_seen(DriverView::waiting, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::error);
}

TEST(KernelCells, DriverSeenWithoutAnyClaimDoesNothing) {
  CellMachine m = ready_machine(confirming());
  m.submit("1", std::nullopt, kNonce, 0);
  Actions a = m.driver_seen(DriverView::waiting, 0);
  EXPECT_FALSE(a.finished);
  EXPECT_FALSE(a.check_driver);
  EXPECT_EQ(m.state(), KernelState::running);
}

TEST(KernelCells, DeadlineInterruptsThenTheEndIsATimeoutWithStateKept) {
  CellMachine m = ready_machine();
  m.submit("loop", 0.5, kNonce, 0);
  Actions a = m.timer(500 * kMs);
  EXPECT_TRUE(a.interrupt);
  ASSERT_TRUE(a.arm_ns);
  EXPECT_EQ(*a.arm_ns, 200 * kMs) << "SIGINT again every 200 ms";
  EXPECT_EQ(m.state(), KernelState::interrupting);
  a = m.timer(700 * kMs);
  EXPECT_TRUE(a.interrupt);
  EXPECT_FALSE(a.kill);
  a = m.end_message(end_msg(kNonce, 1), DriverView::between, 800 * kMs);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::timeout);
  EXPECT_EQ(a.finished->rc, 1);
  EXPECT_FALSE(a.finished->state_lost);
  EXPECT_NE(a.finished->error.find("deadline of 0.5 s"), std::string::npos) << a.finished->error;
  EXPECT_TRUE(a.disarm);
  EXPECT_EQ(m.state(), KernelState::idle);
}

TEST(KernelCells, TheLastResendIsArmedForWhatIsLeftOfTheGrace) {
  CellMachineConfig c;
  c.grace_ms = 300;
  CellMachine m = ready_machine(c);
  m.submit("loop", 1.0, kNonce, 0);
  m.timer(1000 * kMs);
  Actions a = m.timer(1250 * kMs);
  ASSERT_TRUE(a.arm_ns);
  EXPECT_EQ(*a.arm_ns, 50 * kMs);
}

TEST(KernelCells, GraceExpiredTearsDownAndEveryLaterCellIsDead) {
  CellMachine m = ready_machine();
  m.submit("loop", 0.5, kNonce, 0);
  m.timer(500 * kMs);
  Actions a = m.timer(2500 * kMs);
  EXPECT_TRUE(a.kill);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::timeout);
  EXPECT_FALSE(a.finished->rc);
  EXPECT_TRUE(a.finished->state_lost);
  EXPECT_EQ(m.state(), KernelState::dead);
  EXPECT_NE(m.dead_reason().find("ignored SIGINT for 2000 ms"), std::string::npos);
  a = m.submit("1", std::nullopt, kNonce, 0);
  ASSERT_TRUE(a.refused);
  EXPECT_EQ(a.refused->status, CellStatus::dead);
  EXPECT_TRUE(a.refused->state_lost);
  EXPECT_NE(a.refused->error.find("stop it and start a new one"), std::string::npos);
  // The interpreter's death that follows the kill keeps the first reason.
  m.died("the kernel's interpreter exited (code 137)", false, 0);
  EXPECT_NE(m.dead_reason().find("ignored SIGINT"), std::string::npos);
}

TEST(KernelCells, TimerWithoutARunningDeadlineDoesNothing) {
  CellMachine m = ready_machine();
  Actions a = m.timer(0);
  EXPECT_FALSE(a.interrupt || a.kill || a.finished || a.arm_ns);
  m.submit("1", std::nullopt, kNonce, 0);
  a = m.timer(0);
  EXPECT_FALSE(a.interrupt || a.kill || a.finished || a.arm_ns);
  EXPECT_EQ(m.state(), KernelState::running);
}

TEST(KernelCells, DeathWhileRunningAnswersDeadWithStateLost) {
  CellMachine m = ready_machine();
  m.submit("os._exit(1)", std::nullopt, kNonce, 0);
  m.output(false, "partial", 7);
  Actions a = m.died("the kernel ran out of memory", true, 0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::dead);
  EXPECT_TRUE(a.finished->state_lost);
  EXPECT_TRUE(a.finished->oom);
  EXPECT_EQ(a.finished->out, "partial");
  EXPECT_EQ(m.state(), KernelState::dead);
  a = m.submit("1", std::nullopt, kNonce, 0);
  ASSERT_TRUE(a.refused);
  EXPECT_TRUE(a.refused->oom);
  EXPECT_NE(a.refused->error.find("ran out of memory"), std::string::npos);
}

TEST(KernelCells, DeathWhileIdleAnswersNothing) {
  CellMachine m = ready_machine();
  EXPECT_FALSE(m.died("gone", false, 0).finished);
  EXPECT_EQ(m.state(), KernelState::dead);
  EXPECT_FALSE(m.end_message(end_msg(kNonce, 0), DriverView::waiting, 0).finished);
}

TEST(KernelCells, InterruptOnlyWhileACellRuns) {
  CellMachine m = ready_machine();
  EXPECT_FALSE(m.interrupt_request().interrupt);
  m.submit("1", std::nullopt, kNonce, 0);
  EXPECT_TRUE(m.interrupt_request().interrupt);
  EXPECT_EQ(m.state(), KernelState::running) << "an int is not a deadline";
}

TEST(KernelCells, StopTearsDown) {
  CellMachine m = ready_machine();
  EXPECT_TRUE(m.stop().kill);
  m.submit("1", std::nullopt, kNonce, 0);
  EXPECT_TRUE(m.stop().kill);
}

TEST(KernelCells, ReplCellsAreTypedAndEndWhenTheReplWaits) {
  CellMachineConfig c;
  c.repl = true;
  CellMachine m = ready_machine(c);
  Actions a = m.submit("print(1)", std::nullopt, kNonce, 0);
  EXPECT_EQ(a.write, "print(1)\n");
  EXPECT_EQ(m.submit("x", std::nullopt, kNonce, 0).refused->status, CellStatus::busy);
  EXPECT_FALSE(m.end_message(end_msg(kNonce, 0), DriverView::waiting, 0).finished) << "a REPL has no driver";
  m.output(false, "1\n>>> ", 6);
  EXPECT_EQ(m.cell_out(), "1\n>>> ");
  a = m.repl_idle(0);
  ASSERT_TRUE(a.finished);
  EXPECT_EQ(a.finished->status, CellStatus::done);
  EXPECT_FALSE(a.finished->rc);
  EXPECT_EQ(m.submit("y\n", std::nullopt, kNonce, 0).write, "y\n");
}

TEST(KernelCells, ReplIdleIsIgnoredForDriverKernels) {
  CellMachine m = ready_machine();
  m.submit("1", std::nullopt, kNonce, 0);
  EXPECT_FALSE(m.repl_idle(0).finished);
}

TEST(KernelCells, TheLast32ResultsAreKeptForPoll) {
  CellMachine m = ready_machine();
  EXPECT_EQ(m.latest(), nullptr);
  for (int i = 1; i <= 33; ++i) {
    std::string nonce = std::to_string(i);
    m.submit("1", std::nullopt, nonce, 0);
    ASSERT_TRUE(m.end_message(end_msg(nonce, i), DriverView::between, 0).finished);
  }
  EXPECT_EQ(m.result("c1"), nullptr);
  ASSERT_NE(m.result("c2"), nullptr);
  EXPECT_EQ(m.result("c2")->rc, 2);
  ASSERT_NE(m.latest(), nullptr);
  EXPECT_EQ(m.latest()->cell_id, "c33");
  EXPECT_EQ(m.result("c99"), nullptr);
}

TEST(KernelCells, KeptResultsStayWithin256MiBOfOutput) {
  // The kept output is counted as results come and go: 100 MiB cells, the oldest dropped once the
  // total passes 256 MiB, and small cells after them keep what fits.
  CellMachineConfig cfg;
  cfg.output_limit = 100ull << 20;
  CellMachine m = ready_machine(cfg);
  std::string chunk(1 << 20, 'x');
  auto cell = [&](int i, int mib) {
    std::string nonce = std::to_string(i);
    m.submit("1", std::nullopt, nonce, 0);
    for (int k = 0; k < mib; ++k) m.output(false, chunk.data(), chunk.size());
    ASSERT_TRUE(m.end_message(end_msg(nonce, i), DriverView::between, 0).finished);
  };
  cell(1, 100);
  cell(2, 100);
  ASSERT_NE(m.result("c1"), nullptr);
  cell(3, 100);  // 300 MiB: c1 goes
  EXPECT_EQ(m.result("c1"), nullptr);
  ASSERT_NE(m.result("c2"), nullptr);
  EXPECT_EQ(m.result("c2")->out.size(), 100u << 20);
  cell(4, 50);  // 250 MiB: all kept
  ASSERT_NE(m.result("c2"), nullptr);
  cell(5, 10);  // 260 MiB: c2 goes, c3 stays
  EXPECT_EQ(m.result("c2"), nullptr);
  ASSERT_NE(m.result("c3"), nullptr);
  for (int i = 6; i <= 40; ++i) cell(i, 0);  // then the count of 32 decides
  EXPECT_EQ(m.result("c8"), nullptr);
  ASSERT_NE(m.result("c9"), nullptr);
}

std::string syscall_line(long nr, unsigned arg0) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%ld 0x%x 0x7ffd0000 0x10000 0x0 0x0 0x0 0x7ffd1234 0x7f001234\n", nr, arg0);
  return buf;
}

TEST(KernelDriverView, WaitingOnlyInAReadOfTheCellPipeOnceItsFrameIsWritten) {
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_read, 3), true), DriverView::waiting);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_readv, 3), true), DriverView::waiting);
  // The frame not read whole yet: the cell has not started, no end can be its.
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_read, 3), false), DriverView::inside);
  // A read of another fd (stdin, a file, a socket) is the cell's own work.
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_read, 0), true), DriverView::inside);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_read, 4), true), DriverView::inside);
}

TEST(KernelDriverView, OnTheWayFromTheEndToTheWait) {
  EXPECT_EQ(classify_driver_syscall("running\n", true), DriverView::between);
  EXPECT_EQ(classify_driver_syscall("-1 0x7ffd0000 0x7f001234\n", true), DriverView::between);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_futex, 0x1234), true), DriverView::between);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_sendmsg, 4), true), DriverView::between);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_write, 1), true), DriverView::between);
}

TEST(KernelDriverView, BlockedAnywhereElseIsInsideTheCell) {
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_clock_nanosleep, 1), true), DriverView::inside);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_wait4, 0xffffffff), true), DriverView::inside);
  EXPECT_EQ(classify_driver_syscall(syscall_line(SYS_pselect6, 0), true), DriverView::inside);
  EXPECT_EQ(classify_driver_syscall("", true), DriverView::between) << "unreadable: the exit decides";
}

}  // namespace
}  // namespace kern::kernel
