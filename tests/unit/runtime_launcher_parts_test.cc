// Pure pieces of the launcher: exit-status rules, the registry's name rule, sub-id ranges
// and the enforcement byte.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <ctime>

#include "runtime/cgroup/enforcement.h"
#include "runtime/exit_status.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"
#include "runtime/userns.h"

namespace kern {
namespace {

TEST(ExitStatus, ExitedAndSignalled) {
  EXPECT_EQ(exit_code_from_wait_status(0), 0);
  EXPECT_EQ(exit_code_from_wait_status(42 << 8), 42);
  EXPECT_EQ(exit_code_from_wait_status(SIGKILL), 137);
  EXPECT_EQ(exit_code_from_wait_status(SIGSYS), 159);
  EXPECT_EQ(exit_code_from_wait_status(SIGTERM), 143);
}

TEST(Registry, BoxNames) {
  EXPECT_TRUE(valid_box_name("hello"));
  EXPECT_TRUE(valid_box_name("a.b_c-1"));
  EXPECT_TRUE(valid_box_name(std::string(64, 'x')));
  EXPECT_FALSE(valid_box_name(std::string(65, 'x')));
  EXPECT_FALSE(valid_box_name(""));
  EXPECT_FALSE(valid_box_name("-x"));
  EXPECT_FALSE(valid_box_name(".x"));
  EXPECT_FALSE(valid_box_name("a/b"));
  EXPECT_FALSE(valid_box_name("vcpu:x"));
}

TEST(Registry, ClaimRefusesALiveName) {
  char tmpl[] = "/tmp/kern-reg-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string rt = tmpl;
  {
    auto a = BoxRegistration::claim(rt, "same");
    ASSERT_TRUE(a);
    BoxRecord rec;
    rec.name = "same";
    rec.launcher_pid = ::getpid();
    rec.launcher_start = sys::process_start_time(::getpid());
    ASSERT_TRUE(a->write(rec));
    auto b = BoxRegistration::claim(rt, "same");
    ASSERT_FALSE(b);
    EXPECT_NE(b.error().what().find("already running"), std::string::npos);
    // Taking over a stale record: tests/unit/runtime_registry_test.cc.
  }
  EXPECT_TRUE(list_boxes(rt, true).empty());
  (void)sys::remove_tree(AT_FDCWD, rt);
}

TEST(Registry, OneRecordFilePerBoxAndNoDirectoryPerBox) {
  char tmpl[] = "/tmp/kern-reg-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string rt = tmpl;
  struct stat st;
  {
    auto a = BoxRegistration::claim(rt, "one");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->path(), rt + "/boxes/one");
    EXPECT_EQ(a->scratch_dir(), rt + "/scratch");
    ASSERT_EQ(::lstat(a->path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    ASSERT_EQ(::stat(a->scratch_dir().c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    BoxRecord rec;
    rec.name = "one";
    rec.launcher_pid = ::getpid();
    rec.launcher_start = sys::process_start_time(::getpid());
    ASSERT_TRUE(a->write(rec));
    auto listed = list_boxes(rt, true);
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].name, "one");
    EXPECT_NE(::access((rt + "/boxes/.one.tmp").c_str(), F_OK), 0);  // renamed, not left
  }
  // Released: the record is gone, the shared scratch directory stays.
  EXPECT_NE(::access((rt + "/boxes/one").c_str(), F_OK), 0);
  EXPECT_EQ(::access((rt + "/scratch").c_str(), F_OK), 0);
  // An entry of an older kern (a directory with state.json) whose launcher is dead, and a record
  // left half-written long ago, are reaped by the next listing.
  ASSERT_EQ(::mkdir((rt + "/boxes/old").c_str(), 0700), 0);
  ASSERT_TRUE(sys::write_file(AT_FDCWD, rt + "/boxes/old/state.json",
                              "{\"name\":\"old\",\"launcher_pid\":4194303,\"launcher_start\":1}\n", 0600));
  ASSERT_TRUE(sys::write_file(AT_FDCWD, rt + "/boxes/.gone.tmp", "{\"na", 0600));
  struct timespec past[2] = {{::time(nullptr) - 60, 0}, {::time(nullptr) - 60, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (rt + "/boxes/.gone.tmp").c_str(), past, 0), 0);
  EXPECT_TRUE(list_boxes(rt, true).empty());
  EXPECT_NE(::access((rt + "/boxes/old").c_str(), F_OK), 0);
  EXPECT_NE(::access((rt + "/boxes/.gone.tmp").c_str(), F_OK), 0);
  (void)sys::remove_tree(AT_FDCWD, rt);
}

TEST(Userns, SubidRangeByNameOrUid) {
  std::string text = "# comment\nalice:100000:65536\n1001:200000:1000\n";
  auto a = find_subid_range(text, "alice", 5, "/etc/subuid");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->start, 100000u);
  EXPECT_EQ(a->count, 65536u);
  auto b = find_subid_range(text, "bob", 1001, "/etc/subuid");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->start, 200000u);
  EXPECT_FALSE(find_subid_range(text, "carol", 7, "/etc/subuid"));
}

TEST(Enforcement, StartedByte) {
  Enforcement e;
  EXPECT_EQ(started_memory_byte(e), 0);  // undetermined
  e.memory = Verdict::enforced;
  EXPECT_EQ(started_memory_byte(e), 1);
  e.memory = Verdict::not_enforced;
  EXPECT_EQ(started_memory_byte(e), 2);
  e.memory = Verdict::not_requested;
  EXPECT_EQ(started_memory_byte(e), 0);
}

}  // namespace
}  // namespace kern
