// The registry's claim, take-over, reap and release rules (runtime/registry.h): who owns a box
// name is the holder of the record's owner lock, and taking a stale record over is one step.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

struct TempRuntime {
  std::string dir;
  TempRuntime() {
    char tmpl[] = "/tmp/kern-registry-test-XXXXXX";
    dir = ::mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempRuntime() { (void)sys::remove_tree(AT_FDCWD, dir); }
  std::string record(const std::string& name) const { return dir + "/boxes/" + name; }
};

BoxRecord own_record(const std::string& name) {
  BoxRecord rec;
  rec.name = name;
  rec.launcher_pid = ::getpid();
  rec.launcher_start = sys::process_start_time(::getpid());
  rec.command = "sleep 1";
  return rec;
}

// What a SIGKILLed launcher leaves: a complete record, its launcher gone, nobody holding it.
void leave_stale_record(const TempRuntime& rt, const std::string& name) {
  pid_t p = ::fork();
  ASSERT_GE(p, 0);
  if (p == 0) {
    auto reg = BoxRegistration::claim(rt.dir, name);
    if (!reg || !reg->write(own_record(name))) _exit(1);
    _exit(0);  // no release: the destructor does not run, as under SIGKILL
  }
  int st = 0;
  ASSERT_EQ(::waitpid(p, &st, 0), p);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_EQ(::access(rt.record(name).c_str(), F_OK), 0);
}

ino_t inode_of(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(RegistryClaim, ALiveNameIsRefusedWhateverItsRecordSays) {
  TempRuntime rt;
  auto a = BoxRegistration::claim(rt.dir, "same");
  ASSERT_TRUE(a);
  // Not written yet (a box starting), then written with a launcher that is not alive: the name
  // stays taken while the claim is held.
  auto b = BoxRegistration::claim(rt.dir, "same");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().what().find("already running"), std::string::npos);
  BoxRecord rec = own_record("same");
  rec.launcher_pid = 4194303;
  ASSERT_TRUE(a->write(rec));
  EXPECT_FALSE(BoxRegistration::claim(rt.dir, "same"));
  EXPECT_EQ(list_boxes(rt.dir, true).size(), 1u);
  EXPECT_EQ(::access(rt.record("same").c_str(), F_OK), 0) << "a held record was reaped";
}

TEST(RegistryClaim, AStaleRecordIsTakenOverInPlace) {
  TempRuntime rt;
  leave_stale_record(rt, "left");
  ino_t before = inode_of(rt.record("left"));
  auto c = BoxRegistration::claim(rt.dir, "left");
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(inode_of(rt.record("left")), before);
  // Emptied: the dead launcher's record is not shown as this box.
  EXPECT_TRUE(list_boxes(rt.dir, true).empty());
  EXPECT_EQ(::access(rt.record("left").c_str(), F_OK), 0);
  ASSERT_TRUE(c->write(own_record("left")));
  EXPECT_EQ(list_boxes(rt.dir, true).size(), 1u);
}

// A record nobody holds the lock of whose launcher still runs is an older kern's live box
// (that kern took no lock); a fresh runtime dir gets boxes/ and scratch/ at the first claim;
// an older kern's runtime dir with boxes/ and no scratch/ gets scratch/ too.
TEST(RegistryClaim, AnOlderKernsLiveRecordIsRefusedAndMissingDirsAreMade) {
  TempRuntime rt;
  ASSERT_EQ(::mkdir((rt.dir + "/boxes").c_str(), 0700), 0);
  std::string text = record_to_json(own_record("old")) + "\n";
  {
    UniqueFd fd(::open(rt.record("old").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  auto r = BoxRegistration::claim(rt.dir, "old");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("already running"), std::string::npos) << r.error().what();
  struct stat st;
  EXPECT_EQ(::stat(rt.record("old").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(text.size())) << "the live record was emptied";
  EXPECT_EQ(::stat((rt.dir + "/scratch").c_str(), &st), 0) << "scratch/ not made beside an existing boxes/";
  TempRuntime fresh;
  auto c = BoxRegistration::claim(fresh.dir, "new");
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(::access(fresh.record("new").c_str(), F_OK), 0);
  EXPECT_EQ(c->scratch_dir(), fresh.dir + "/scratch");
  EXPECT_EQ(::access(c->scratch_dir().c_str(), F_OK), 0);
}

TEST(RegistryClaim, ListingReapsStaleRecordsOnly) {
  TempRuntime rt;
  leave_stale_record(rt, "gone");
  auto live = BoxRegistration::claim(rt.dir, "live");
  ASSERT_TRUE(live);
  ASSERT_TRUE(live->write(own_record("live")));
  auto listed = list_boxes(rt.dir, false);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "live");
  EXPECT_EQ(::access(rt.record("gone").c_str(), F_OK), 0);  // no reap asked for
  EXPECT_EQ(list_boxes(rt.dir, true).size(), 1u);
  EXPECT_NE(::access(rt.record("gone").c_str(), F_OK), 0);
  EXPECT_EQ(::access(rt.record("live").c_str(), F_OK), 0);
}

TEST(RegistryClaim, ReleaseRemovesOnlyTheRecordItOwns) {
  TempRuntime rt;
  auto a = BoxRegistration::claim(rt.dir, "mine");
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->write(own_record("mine")));
  // Someone removed a's record by hand and another box claimed the name since.
  ASSERT_EQ(::unlink(rt.record("mine").c_str()), 0);
  auto b = BoxRegistration::claim(rt.dir, "mine");
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->write(own_record("mine")));
  a->release();
  EXPECT_EQ(::access(rt.record("mine").c_str(), F_OK), 0) << "release removed another box's record";
  EXPECT_FALSE(BoxRegistration::claim(rt.dir, "mine"));
  b->release();
  EXPECT_NE(::access(rt.record("mine").c_str(), F_OK), 0);
}

// Many processes race for one name that a dead launcher left behind: exactly one wins each
// round, whether the others are claiming or listing (and so reaping) at the same time.
TEST(RegistryClaim, RacersAfterAStaleRecordHaveExactlyOneWinner) {
  TempRuntime rt;
  constexpr int kRounds = 60, kRacers = 24;
  for (int round = 0; round < kRounds; ++round) {
    leave_stale_record(rt, "race");
    // go: end-of-file starts everyone at once; result: one byte per racer (w won, l lost,
    // p listed); hold: winners keep the name until every racer has reported.
    int go[2], result[2], hold[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_EQ(::pipe(result), 0);
    ASSERT_EQ(::pipe(hold), 0);
    std::vector<pid_t> kids;
    for (int i = 0; i < kRacers; ++i) {
      pid_t p = ::fork();
      ASSERT_GE(p, 0);
      if (p == 0) {
        ::close(go[1]);
        ::close(result[0]);
        ::close(hold[1]);
        char c;
        if (::read(go[0], &c, 1) < 0) _exit(2);
        if (i % 4 == 3) {  // a `kern ps` among the racers
          (void)list_boxes(rt.dir, true);
          (void)!::write(result[1], "p", 1);
          _exit(0);
        }
        auto reg = BoxRegistration::claim(rt.dir, "race");
        if (!reg) {
          (void)!::write(result[1], "l", 1);
          _exit(0);
        }
        (void)reg->write(own_record("race"));
        (void)!::write(result[1], "w", 1);
        (void)!::read(hold[0], &c, 1);
        _exit(0);  // no release: the record is left stale for the next round
      }
      kids.push_back(p);
    }
    ::close(go[0]);
    ::close(result[1]);
    ::close(hold[0]);
    ::close(go[1]);
    std::string got;
    char buf[64];
    ssize_t n;
    while (got.size() < kRacers && (n = ::read(result[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
    ::close(hold[1]);
    ::close(result[0]);
    for (pid_t p : kids) ::waitpid(p, nullptr, 0);
    ASSERT_EQ(std::count(got.begin(), got.end(), 'w'), 1) << "round " << round << ": results " << got;
  }
}

// A detached box's record through its states: running (owner lock held) -> exited (kept, the
// name reserved, listed by list_boxes_all only) -> removed by remove_exited_box.
TEST(RegistryExited, AnExitedRecordKeepsItsNameUntilRemoved) {
  TempRuntime rt;
  {
    auto reg = BoxRegistration::claim(rt.dir, "kept");
    ASSERT_TRUE(reg.has_value());
    BoxRecord rec = own_record("kept");
    rec.detached = true;
    ASSERT_TRUE(reg->write(rec).has_value());
    auto refused = remove_exited_box(rt.dir, "kept");
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message().find("is running"), std::string::npos);
    rec.exit_code = 3;
    rec.exited_unix = 1234;
    ASSERT_TRUE(reg->keep_exited(rec).has_value());
  }
  // The owner lock is gone, the record is not (the destructor after keep_exited removes nothing).
  ASSERT_EQ(::access(rt.record("kept").c_str(), F_OK), 0);
  EXPECT_TRUE(list_boxes(rt.dir, true).empty());
  auto all = list_boxes_all(rt.dir, true);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(record_exited(all[0]));
  EXPECT_EQ(all[0].exit_code, 3);
  EXPECT_EQ(all[0].exited_unix, 1234);
  auto again = BoxRegistration::claim(rt.dir, "kept");
  ASSERT_FALSE(again.has_value());
  EXPECT_NE(again.error().hint().find("kern rm kept"), std::string::npos);
  ASSERT_TRUE(remove_exited_box(rt.dir, "kept").has_value());
  EXPECT_NE(::access(rt.record("kept").c_str(), F_OK), 0);
  EXPECT_TRUE(BoxRegistration::claim(rt.dir, "kept").has_value());
}

// The record is read through a buffer that grows (runtime/registry.cc): a record of many
// kilobytes (a detached box's detail) is read whole, as a small one is.
TEST(RegistryClaim, ALargeRecordIsReadWhole) {
  TempRuntime rt;
  BoxRecord rec = own_record("big");
  rec.detached = true;  // only a detached record keeps its detail
  rec.command = std::string(20000, 'x');
  rec.detail = "{\"note\":\"" + std::string(9000, 'y') + "\"}";
  auto reg = BoxRegistration::claim(rt.dir, "big");
  ASSERT_TRUE(reg && reg->write(rec));
  auto all = list_boxes(rt.dir, false);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].command, rec.command);
  EXPECT_EQ(all[0].detail.size(), rec.detail.size());
  auto read = read_box_record(rt.record("big"));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->command.size(), 20000u);
}

// A running detached record whose supervisor died (no lock, state running) is stale: reaped
// with its log and socket.
TEST(RegistryExited, ARunningDetachedRecordWithoutOwnerIsReapedWithItsFiles) {
  TempRuntime rt;
  ASSERT_EQ(::mkdir((rt.dir + "/detached").c_str(), 0700), 0);
  std::string log = detached_log_path(rt.dir, "gone");
  ASSERT_TRUE(sys::write_file(AT_FDCWD, log, "x", 0600).has_value());
  pid_t p = ::fork();
  ASSERT_GE(p, 0);
  if (p == 0) {
    auto reg = BoxRegistration::claim(rt.dir, "gone");
    BoxRecord rec = own_record("gone");
    rec.detached = true;
    if (!reg || !reg->write(rec)) _exit(1);
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(p, &st, 0), p);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  EXPECT_TRUE(list_boxes_all(rt.dir, true).empty());
  EXPECT_NE(::access(rt.record("gone").c_str(), F_OK), 0);
  EXPECT_NE(::access(log.c_str(), F_OK), 0);
}

TEST(RegistryExited, ForegroundRecordsCarryNoDetachedFields) {
  BoxRecord rec = own_record("fg");
  std::string j = record_to_json(rec);
  EXPECT_EQ(j.find("state"), std::string::npos);
  EXPECT_EQ(j.find("detached"), std::string::npos);
}

}  // namespace
}  // namespace kern
