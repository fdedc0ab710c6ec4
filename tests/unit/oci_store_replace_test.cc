// Store::commit_tree with replace (a damaged tree's repair) when renameat2(RENAME_EXCHANGE) does
// not swap: the file system's answers are given by a seccomp filter in a forked child, since
// ext4 and tmpfs, where the tests run, have the flag. The parent runs the same repair with the
// real flag as the control.
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "oci/store.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/test_require.h"

namespace kern::oci {
namespace {

constexpr uint32_t kArgs = offsetof(struct seccomp_data, args);

// Loads `filter` in this process (a forked child): 0, or the errno.
int load(std::vector<struct sock_filter>& filter) {
  struct sock_fprog prog = {static_cast<unsigned short>(filter.size()), filter.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return errno;
  return 0;
}

// Whether a filter loads here at all (qemu-user refuses seccomp for its guest): tried in a child.
bool filters_load() {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<struct sock_filter> allow = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    ::_exit(load(allow) == 0 ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#define SKIP_WITHOUT_FILTERS()                                                                  \
  do {                                                                                          \
    if (!filters_load())                                                                        \
      KERN_SKIP_UNLESS_REQUIRED("seccomp-filter-load",                                          \
                                "loading a seccomp filter fails here (qemu-user refuses seccomp " \
                                "for its guest): nothing to give the file system's answers with"); \
  } while (0)

class StoreReplaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-store-replace-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    auto s = Store::open(true, base_ + "/store");
    ASSERT_TRUE(s.has_value()) << s.error().what();
    store_.emplace(std::move(*s));
    // The tree in the store (the damaged one) and ours, unpacked again, in a staging dir.
    ASSERT_EQ(::mkdir(store_->tree_path("t1").c_str(), 0755), 0);
    put(store_->tree_path("t1") + "/file", "in the store");
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }

  static void put(const std::string& path, const std::string& data) { std::ofstream(path) << data; }
  static std::string get(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  Staging staged_tree() {
    auto st = store_->begin_staging();
    EXPECT_TRUE(st.has_value()) << st.error().what();
    EXPECT_EQ(::mkdirat(st->fd(), "tree", 0755), 0);
    put(st->file("tree") + "/file", "unpacked again");
    return std::move(*st);
  }

  // Runs the repair in a child under `filter`; its exit code: 0 the repair succeeded, 2 it failed,
  // 1 the filter could not be loaded.
  int repair_under(const Staging& st, std::vector<struct sock_filter> filter) {
    pid_t pid = ::fork();
    if (pid == 0) {
      if (load(filter) != 0) ::_exit(1);
      auto r = store_->commit_tree(st, "tree", "", "t1", "", true);
      if (!r) ::fprintf(stderr, "commit_tree: %s\n", r.error().what().c_str());
      ::_exit(r ? 0 : 2);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  }

  // The control: where the file system has the flag, the repair swaps ours in.
  void expect_the_real_flag_swaps() {
    Staging st = staged_tree();
    auto r = store_->commit_tree(st, "tree", "", "t1", "", true);
    ASSERT_TRUE(r.has_value()) << r.error().what();
    EXPECT_EQ(get(store_->tree_path("t1") + "/file"), "unpacked again");
  }

  std::string base_;
  std::optional<Store> store_;
};


// renameat2 with RENAME_EXCHANGE (the low word of its fifth argument) answers `exchange`; with
// `fake_first`, a plain rename whose first argument is not the staging dir (the repair's first
// rename, the store's tree moved aside) returns 0 without being done: another repair's tree is
// then in place when ours is renamed there, as in the window between the two renames.
std::vector<struct sock_filter> filter(uint32_t exchange, bool fake_first, int staging_fd) {
  const uint32_t allow = SECCOMP_RET_ALLOW;
  const uint32_t fake = fake_first ? SECCOMP_RET_ERRNO | 0 : SECCOMP_RET_ALLOW;
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef SYS_renameat
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat, 4, 0),
#else
      BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat2, 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArgs + 4 * sizeof(__u64)),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, RENAME_EXCHANGE, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | exchange),
      // A plain rename (renameat, or renameat2 without the flag): by its first argument.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArgs),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(staging_fd), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, allow),
      BPF_STMT(BPF_RET | BPF_K, fake),
  };
}

// Another failure of the swap (EIO here) fails the repair and leaves the store's tree: the plain
// rename that follows a file system without the flag would meet it and read ENOTEMPTY as another
// import's tree, keeping the damaged one without a word.
TEST_F(StoreReplaceTest, ASwapThatFailsOtherwiseFailsTheRepair) {
  SKIP_WITHOUT_FILTERS();
  {
    Staging st = staged_tree();
    EXPECT_EQ(repair_under(st, filter(EIO, false, st.fd())), 2);
    EXPECT_EQ(get(store_->tree_path("t1") + "/file"), "in the store");
  }
  expect_the_real_flag_swaps();
}

// Without the flag (EINVAL, as FUSE 2 answers), another repair's tree met by the second rename is
// kept and the repair succeeds, as the plain import keeps another import's tree.
TEST_F(StoreReplaceTest, WithoutTheFlagAnotherRepairsTreeMetBetweenTheRenamesIsKept) {
  SKIP_WITHOUT_FILTERS();
  {
    Staging st = staged_tree();
    EXPECT_EQ(repair_under(st, filter(EINVAL, true, st.fd())), 0);
    EXPECT_EQ(get(store_->tree_path("t1") + "/file"), "in the store");  // the tree met there
  }
  // The discriminant: without the faked first rename the same filter repairs by two renames.
  {
    Staging st = staged_tree();
    EXPECT_EQ(repair_under(st, filter(EINVAL, false, st.fd())), 0);
    EXPECT_EQ(get(store_->tree_path("t1") + "/file"), "unpacked again");
  }
}

}  // namespace
}  // namespace kern::oci
