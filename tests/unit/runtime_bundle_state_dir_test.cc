// The container store under --root: one directory per id, state.json written by rename,
// missing and taken ids refused, removal of everything in a container's directory.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "runtime/bundle/state_dir.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/seccomp_probe.h"

namespace kern::bundle {
namespace {

class BundleStateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-statedir-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }
  std::string base_;
};

TEST_F(BundleStateDir, DefaultRoots) {
  EXPECT_EQ(default_state_root(0, "/run/user/0"), "/run/kern-oci");
  EXPECT_EQ(default_state_root(1000, "/run/user/1000"), "/run/user/1000/kern-oci");
  EXPECT_EQ(default_state_root(1000, nullptr), "/tmp/kern-oci-1000");
  EXPECT_EQ(default_state_root(1000, "relative"), "/tmp/kern-oci-1000");
  // uid 0 of rootless podman's user namespace is not root.
  EXPECT_EQ(default_state_root(0, "/run/user/1000", false), "/run/user/1000/kern-oci");
}

TEST_F(BundleStateDir, CreateWriteReadListRemove) {
  auto dir = StateDir::open(base_ + "/root");
  ASSERT_TRUE(dir.has_value()) << dir.error().what();
  ASSERT_TRUE(dir->create("c1").has_value());
  auto again = dir->create("c1");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().what(), "container \"c1\" exists already");
  EXPECT_FALSE(dir->create("../escape").has_value());
  ContainerRecord r;
  r.id = "c1";
  r.bundle = "/b";
  r.pid = 7;
  r.pid_start_time = 9;
  ASSERT_TRUE(dir->write(r).has_value());
  EXPECT_NE(::access((dir->container_dir("c1") + "/state.json.tmp").c_str(), F_OK), 0);
  auto back = dir->read("c1");
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(back->pid, 7);
  // A second write swaps the new record in (RENAME_EXCHANGE): the file that held the old record
  // is the next write's, and a reader sees the new one.
  auto inode = [&](const char* name) {
    struct stat st {};
    EXPECT_EQ(::stat((dir->container_dir("c1") + "/" + name).c_str(), &st), 0) << name;
    return st.st_ino;
  };
  auto rewrite_and_read = [&](int pid) {
    r.pid = pid;
    ASSERT_TRUE(dir->write(r).has_value());
    auto got = dir->read("c1");
    ASSERT_TRUE(got.has_value()) << got.error().what();
    EXPECT_EQ(got->pid, pid);
  };
  ino_t first = inode("state.json");
  rewrite_and_read(8);
  EXPECT_EQ(inode("state.json.tmp"), first);
  rewrite_and_read(9);
  EXPECT_EQ(inode("state.json"), first);  // two files between them, whatever the number of writes
  std::ofstream(dir->container_dir("c1") + "/leftover") << "x";
  ASSERT_TRUE(dir->create("c0").has_value());
  auto ids = dir->list();
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, (std::vector<std::string>{"c0", "c1"}));
  ASSERT_TRUE(dir->remove("c1").has_value());
  EXPECT_NE(::access(dir->container_dir("c1").c_str(), F_OK), 0);
  auto gone = dir->read("c1");
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().sys_errno(), ENOENT);
  EXPECT_TRUE(dir->remove("c1").has_value());  // already gone
}

TEST_F(BundleStateDir, WritersTakeTheEntryLockOneAtATime) {
  auto dir = StateDir::open(base_ + "/root");
  ASSERT_TRUE(dir.has_value()) << dir.error().what();
  ASSERT_TRUE(dir->create("c1").has_value());
  ContainerRecord r;
  r.id = "c1";
  r.bundle = "/b";
  r.pid = 7;
  ASSERT_TRUE(dir->write(r).has_value());
  // Another writer holds the entry: this write waits for it, then lands whole.
  int held = ::open(dir->container_dir("c1").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  std::atomic<bool> done{false};
  r.pid = 8;
  std::thread writer([&] {
    EXPECT_TRUE(dir->write(r).has_value());
    done = true;
  });
  ::usleep(200 * 1000);
  EXPECT_FALSE(done.load()) << "the write did not wait for the entry's lock";
  auto meanwhile = dir->read("c1");
  ASSERT_TRUE(meanwhile.has_value()) << meanwhile.error().what();
  EXPECT_EQ(meanwhile->pid, 7);
  ::close(held);  // releases the lock
  writer.join();
  EXPECT_TRUE(done.load());
  auto back = dir->read("c1");
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(back->pid, 8);
}

// On a file system without RENAME_EXCHANGE (renameat2 says EINVAL), a write renames over the
// record instead. The file system's answer is given here by a seccomp filter in a child process
// (ext4 and tmpfs, where the tests run, have the flag): the child checks the filter answers, then
// that every write lands, and that no state.json.tmp is left, as a rename leaves none.
TEST_F(BundleStateDir, WithoutRenameExchangeAWriteRenames) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  auto dir = StateDir::open(base_ + "/root");
  ASSERT_TRUE(dir.has_value()) << dir.error().what();
  ASSERT_TRUE(dir->create("c1").has_value());
  const std::string cdir = dir->container_dir("c1");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto check = [](bool ok, const char* what) {
      if (!ok) {
        ::fprintf(stderr, "child: %s\n", what);
        ::_exit(1);
      }
    };
    // renameat2 with RENAME_EXCHANGE in its flags (the low word of the fifth argument): EINVAL.
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat2, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 4 * sizeof(__u64)),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, RENAME_EXCHANGE, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {static_cast<unsigned short>(sizeof f / sizeof f[0]), f};
    check(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
              ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0,
          "seccomp SET_MODE_FILTER");
    ContainerRecord r;
    r.id = "c1";
    r.bundle = "/b";
    for (int p = 7; p <= 9; ++p) {
      r.pid = p;
      check(dir->write(r).has_value(), "write");
      auto got = dir->read("c1");
      check(got.has_value() && got->pid == p, "read back the newest record");
      check(::access((cdir + "/state.json.tmp").c_str(), F_OK) != 0, "no state.json.tmp after a rename");
    }
    // The discriminant: the kernel refused the swap itself here.
    std::ofstream(cdir + "/other") << "x";
    errno = 0;
    check(::renameat2(AT_FDCWD, (cdir + "/other").c_str(), AT_FDCWD, (cdir + "/state.json").c_str(),
                      RENAME_EXCHANGE) != 0 && errno == EINVAL,
          "renameat2 RENAME_EXCHANGE was not refused");
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  // The control, here where the file system has the flag: a second write swaps, and the file
  // that held the older record stays as state.json.tmp.
  ContainerRecord r;
  r.id = "c1";
  r.bundle = "/b";
  r.pid = 10;
  ASSERT_TRUE(dir->write(r).has_value());
  EXPECT_EQ(::access((cdir + "/state.json.tmp").c_str(), F_OK), 0);
}

TEST_F(BundleStateDir, RootOpenToOthersRefused) {
  std::string root = base_ + "/open";
  ASSERT_EQ(::mkdir(root.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  EXPECT_FALSE(StateDir::open(root).has_value());
  EXPECT_FALSE(StateDir::open("relative/root").has_value());
}

// A state.json that is a FIFO, a link, empty, or another container's record: each read
// returns at once with an error naming the file and the way out (delete --force), never hangs
// (the read of a FIFO with no writer blocked for ever before).
TEST_F(BundleStateDir, BrokenEntriesAreNamedNotWaitedFor) {
  auto dir = StateDir::open(base_ + "/root");
  ASSERT_TRUE(dir.has_value()) << dir.error().what();
  auto state = [&](const char* id) { return dir->container_dir(id) + "/state.json"; };
  ASSERT_TRUE(dir->create("fifo").has_value());
  ASSERT_EQ(::mkfifo(state("fifo").c_str(), 0600), 0);
  auto fifo = dir->read("fifo");
  ASSERT_FALSE(fifo.has_value());
  EXPECT_NE(std::string(fifo.error().what()).find("is not a regular file"), std::string::npos) << fifo.error().what();
  EXPECT_NE(fifo.error().explicit_hint().find("delete --force fifo"), std::string::npos);

  ASSERT_TRUE(dir->create("link").has_value());
  std::ofstream(base_ + "/elsewhere") << "{}";
  ASSERT_EQ(::symlink((base_ + "/elsewhere").c_str(), state("link").c_str()), 0);
  auto link = dir->read("link");
  ASSERT_FALSE(link.has_value());
  EXPECT_NE(std::string(link.error().what()).find("symbolic link"), std::string::npos) << link.error().what();

  ASSERT_TRUE(dir->create("empty").has_value());
  auto empty = dir->read("empty");
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().sys_errno(), ENOENT);  // an entry, not a missing container
  EXPECT_NE(std::string(empty.error().what()).find("has no state.json"), std::string::npos) << empty.error().what();
  std::ofstream(state("empty")) << "";
  EXPECT_FALSE(dir->read("empty").has_value());

  ContainerRecord other;
  other.id = "other";
  other.bundle = "/b";
  ASSERT_TRUE(dir->create("other").has_value());
  ASSERT_TRUE(dir->write(other).has_value());
  ASSERT_TRUE(dir->create("junk").has_value());
  std::ifstream in(state("other"));
  std::ofstream(state("junk")) << in.rdbuf();
  auto junk = dir->read("junk");
  ASSERT_FALSE(junk.has_value());
  EXPECT_NE(std::string(junk.error().what()).find("record of container \"other\""), std::string::npos) << junk.error().what();
  EXPECT_TRUE(dir->read("other").has_value());  // the control: the same text under its own id
  EXPECT_TRUE(dir->exists("junk"));
  EXPECT_FALSE(dir->exists("never"));
}

}  // namespace
}  // namespace kern::bundle
