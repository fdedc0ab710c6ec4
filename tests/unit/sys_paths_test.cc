// The runtime dir (runtime/sys/paths.h): made private when missing, $XDG_RUNTIME_DIR too, and
// refused when it is there but not a private directory of this user.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "runtime/sys/paths.h"

namespace kern {
namespace {

namespace fs = std::filesystem;

class RuntimeDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-paths-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    const char* old = std::getenv("XDG_RUNTIME_DIR");
    had_ = old != nullptr;
    if (old) old_ = old;
  }
  void TearDown() override {
    if (had_) ::setenv("XDG_RUNTIME_DIR", old_.c_str(), 1);
    else ::unsetenv("XDG_RUNTIME_DIR");
    fs::remove_all(base_);
  }
  static mode_t mode_of(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
  }
  std::string base_, old_;
  bool had_ = false;
};

TEST_F(RuntimeDir, MissingDirsAreMadePrivateAndFoundAgain) {
  std::string xrd = base_ + "/run-user";
  ::setenv("XDG_RUNTIME_DIR", xrd.c_str(), 1);
  auto d = paths::runtime_dir();
  ASSERT_TRUE(d) << d.error().what();
  EXPECT_EQ(*d, xrd + "/kern");
  EXPECT_EQ(mode_of(xrd), 0700u);
  EXPECT_EQ(mode_of(*d), 0700u);
  auto again = paths::runtime_dir();  // there now: accepted as it is
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_EQ(*again, *d);
}

TEST_F(RuntimeDir, ADirThatIsNotPrivateOrIsASymlinkIsRefused) {
  ::setenv("XDG_RUNTIME_DIR", base_.c_str(), 1);
  ASSERT_EQ(::mkdir((base_ + "/kern").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((base_ + "/kern").c_str(), 0755), 0);
  auto open_dir = paths::runtime_dir();
  ASSERT_FALSE(open_dir);
  EXPECT_NE(open_dir.error().what().find("is not a private directory"), std::string::npos)
      << open_dir.error().what();
  ASSERT_EQ(::rmdir((base_ + "/kern").c_str()), 0);
  ASSERT_EQ(::mkdir((base_ + "/elsewhere").c_str(), 0700), 0);
  ASSERT_EQ(::symlink("elsewhere", (base_ + "/kern").c_str()), 0);
  auto link = paths::runtime_dir();
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().what().find("is not a private directory"), std::string::npos) << link.error().what();
}

// A host of directories for choose_runtime_base: path -> what lstat would say.
struct FakeHost {
  std::map<std::string, paths::DirFacts> dirs;
  paths::DirProbe probe() const {
    return [this](const std::string& p) -> std::optional<paths::DirFacts> {
      auto it = dirs.find(p);
      if (it == dirs.end()) return std::nullopt;
      return it->second;
    };
  }
};

TEST(RuntimeBase, TheSessionDirIsFoundWithoutXdgRuntimeDirAsInALoginSession) {
  FakeHost h;
  h.dirs["/run/user/1000"] = {true, 1000, 0700};
  // A login session (pam_systemd set the variable) and sudo -iu, su - or cron (no variable):
  // the same answer.
  EXPECT_EQ(paths::choose_runtime_base("/run/user/1000", 1000, h.probe()), "/run/user/1000");
  EXPECT_EQ(paths::choose_runtime_base("", 1000, h.probe()), "/run/user/1000");
}

TEST(RuntimeBase, TheSessionDirCountsOnlyWhenItIsTheUsersAndPrivate) {
  FakeHost h;
  EXPECT_EQ(paths::choose_runtime_base("", 1000, h.probe()), "");  // missing: /tmp/kern-UID
  h.dirs["/run/user/1000"] = {true, 0, 0700};                        // root's
  EXPECT_EQ(paths::choose_runtime_base("", 1000, h.probe()), "");
  h.dirs["/run/user/1000"] = {true, 1000, 0755};                     // open to others
  EXPECT_EQ(paths::choose_runtime_base("", 1000, h.probe()), "");
  h.dirs["/run/user/1000"] = {false, 1000, 0700};                    // a symlink or a file
  EXPECT_EQ(paths::choose_runtime_base("", 1000, h.probe()), "");
}

TEST(RuntimeBase, AnXdgRuntimeDirOfAnotherUserIsPassedOver) {
  // `su user` without -l keeps the caller's XDG_RUNTIME_DIR: not this user's, so the user's
  // own session dir is found instead.
  FakeHost h;
  h.dirs["/run/user/1000"] = {true, 1000, 0700};
  h.dirs["/run/user/1001"] = {true, 1001, 0700};
  EXPECT_EQ(paths::choose_runtime_base("/run/user/1000", 1001, h.probe()), "/run/user/1001");
  // One the user chose, theirs, wins (made when missing).
  h.dirs["/home/u/run"] = {true, 1001, 0755};
  EXPECT_EQ(paths::choose_runtime_base("/home/u/run", 1001, h.probe()), "/home/u/run");
  EXPECT_EQ(paths::choose_runtime_base("/home/u/missing", 1001, h.probe()), "/home/u/missing");
}

}  // namespace
}  // namespace kern
