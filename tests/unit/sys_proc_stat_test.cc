// /proc/PID/stat parsing. The regression this guards: counting one field too far read vsize
// (field 23) as the start time, so a live launcher that allocated memory looked like a dead one
// whose pid had been reused, and its box cgroup was reaped from under it.
#include "runtime/sys/proc_stat.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace kern::sys {
namespace {

TEST(ProcStat, FieldsAreCountedFromTheLastParenthesis) {
  // comm "a) b (c" holds spaces and parentheses; fields 3.. follow the last ')'.
  std::string text = "42 (a) b (c) S 7 42 42 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 1273331 3133440 397 "
                     "18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  auto st = parse_proc_stat(text);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 7);
  EXPECT_EQ(st->start_time, 1273331u);  // field 22, not vsize (3133440, field 23)
}

TEST(ProcStat, TruncatedOrGarbageIsNotAStat) {
  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("42 (x"));
  EXPECT_FALSE(parse_proc_stat("42 (x) S 1 2 3"));
  EXPECT_FALSE(parse_proc_stat("42 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"));
}

TEST(ProcStat, OwnStartTimeIsStableWhileMemoryGrows) {
  uint64_t before = process_start_time(::getpid());
  ASSERT_NE(before, 0u);
  size_t len = 64u << 20;
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, 4096);
  EXPECT_EQ(process_start_time(::getpid()), before);
  ::munmap(p, len);
  // The start time is in clock ticks since boot: it cannot be later than now.
  double uptime = 0;
  std::ifstream("/proc/uptime") >> uptime;
  EXPECT_LE(before, static_cast<uint64_t>((uptime + 1) * static_cast<double>(::sysconf(_SC_CLK_TCK))));
}

TEST(ProcStat, ParentAndZombie) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  // Until it is reaped the child is a zombie: its parent is still us, but it counts as gone.
  for (int i = 0; i < 500; ++i) {
    auto st = read_proc_stat(child);
    if (st && st->state == 'Z') break;
    ::usleep(1000);
  }
  EXPECT_EQ(parent_pid(child), ::getpid());
  EXPECT_EQ(process_start_time(child), 0u);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(process_start_time(child), 0u);
  EXPECT_EQ(parent_pid(child), 0);
}

}  // namespace
}  // namespace kern::sys
