// kern's own directories refused as -v sources and --rootfs (issue 8 item 5): by identity,
// wherever the variables point, and the defaults too.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/bind_policy.h"
#include "cli/kern_dirs.h"

namespace kern::cli {
namespace {

namespace fs = std::filesystem;

class KernDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-dirs-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = fs::canonical(tmpl).string();
    for (const char* d : {"home/.config/kern", "xdg-config/kern", "xdg-cache/kern", "run/kern", "elsewhere",
                          "work/project"})
      fs::create_directories(base_ + "/" + d);
    std::ofstream(base_ + "/home/.config/kern/auth.json") << "{}";
    std::ofstream(base_ + "/xdg-config/kern/auth.json") << "{}";
    save("HOME", base_ + "/home");
    save("XDG_CONFIG_HOME", base_ + "/xdg-config");
    save("XDG_CACHE_HOME", base_ + "/xdg-cache");
    save("XDG_RUNTIME_DIR", base_ + "/run");
    save("KERN_CONFIG", base_ + "/elsewhere/kern.toml");
  }
  void TearDown() override {
    for (auto& [name, value] : saved_) {
      if (value.empty()) ::unsetenv(name.c_str());
      else ::setenv(name.c_str(), value.c_str(), 1);
    }
    fs::remove_all(base_);
  }
  void save(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? old : "");
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  std::string base_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(KernDirs, VariablesAndDefaultsAreBothListed) {
  auto dirs = kern_dirs();
  for (const char* d : {"/xdg-config/kern", "/home/.config/kern", "/xdg-cache/kern", "/run/kern", "/elsewhere"})
    EXPECT_NE(std::find(dirs.begin(), dirs.end(), base_ + d), dirs.end()) << d;
}

TEST_F(KernDirs, CredentialsDirectoryIsRefusedWhateverKernConfigSays) {
  auto dirs = kern_dirs();
  for (const std::string p : {"/xdg-config/kern", "/xdg-config/kern/auth.json", "/xdg-config",
                              "/home/.config/kern", "/home/.config/kern/auth.json", "/home/.config",
                              "/xdg-cache/kern", "/run/kern", "/run", "/"})
    EXPECT_FALSE(check_not_kern_dir(base_ + p, dirs, "--rootfs")) << p;
  EXPECT_TRUE(check_not_kern_dir(base_ + "/work/project", dirs, "--rootfs"));
  EXPECT_TRUE(check_not_kern_dir(base_ + "/work", dirs, "--rootfs"));
}

TEST_F(KernDirs, AnotherNameForTheSameDirectoryIsSeenThrough) {
  // A spelling that is not canonical and a symlink to the directory: the identity decides.
  fs::create_directory_symlink(base_ + "/xdg-config/kern", base_ + "/work/alias");
  auto dirs = kern_dirs();
  auto r = check_not_kern_dir(base_ + "/work/alias", dirs, "-v: refusing to bind");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("kern's own directory"), std::string::npos) << r.error().what();
  EXPECT_FALSE(check_not_kern_dir(base_ + "/work/../xdg-config/./kern/", dirs, "--rootfs"));
  // The same as a -v source through the bind policy.
  EXPECT_FALSE(check_bind_source(base_ + "/xdg-config/kern/auth.json", host_refusal_context()));
  EXPECT_TRUE(check_bind_source(base_ + "/work/project", host_refusal_context()));
}

TEST_F(KernDirs, MissingKernDirIsComparedByItsSpellingEitherWay) {
  // A kern directory not made yet cannot be opened: the path's canonical spelling decides, the
  // same whether the caller resolved the path already or left it to the check.
  std::vector<std::string> dirs = {base_ + "/work/project/not-yet/kern"};
  for (bool canonical : {false, true}) {
    auto r = check_not_kern_dir(base_ + "/work/project", dirs, "--rootfs", canonical);
    ASSERT_FALSE(r) << canonical;
    EXPECT_NE(r.error().what().find("contains kern's own directory"), std::string::npos) << r.error().what();
    EXPECT_TRUE(check_not_kern_dir(base_ + "/elsewhere", dirs, "--rootfs", canonical)) << canonical;
  }
  fs::create_directory_symlink(base_ + "/work/project", base_ + "/work/link");
  EXPECT_FALSE(check_not_kern_dir(base_ + "/work/link", dirs, "--rootfs"));
}

TEST_F(KernDirs, ARefusalNamesTheKernDirCanonically) {
  // XDG_CACHE_HOME through a symlink and with a dot: the directory is found by identity and
  // named by its canonical path, as before the spellings were left unresolved.
  fs::create_directory_symlink(base_ + "/xdg-cache", base_ + "/cache-link");
  ::setenv("XDG_CACHE_HOME", (base_ + "/cache-link/.").c_str(), 1);  // restored by TearDown
  auto dirs = kern_dirs();
  auto r = check_not_kern_dir(base_ + "/xdg-cache/./kern", dirs, "--rootfs");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("it is kern's own directory \"" + base_ + "/xdg-cache/kern\""), std::string::npos)
      << r.error().what();
  r = check_not_kern_dir(base_ + "/xdg-cache", dirs, "--rootfs");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("contains kern's own directory \"" + base_ + "/xdg-cache/kern\""),
            std::string::npos)
      << r.error().what();
}

TEST_F(KernDirs, ADirectoryFarBelowAKernDirIsStillInsideIt) {
  // 100 levels: more than one walk up from one descriptor, so the walk moves its descriptor
  // on the way to the cache dir above.
  std::string deep = base_ + "/xdg-cache/kern";
  for (int i = 0; i < 100; ++i) {
    deep += "/d";
    ASSERT_EQ(::mkdir(deep.c_str(), 0700), 0) << i;
  }
  auto r = check_not_kern_dir(deep, kern_dirs(), "--rootfs", /*path_canonical=*/true);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("is inside kern's own directory \"" + base_ + "/xdg-cache/kern\""),
            std::string::npos)
      << r.error().what();
  EXPECT_TRUE(check_not_kern_dir(base_ + "/work/project", kern_dirs(), "--rootfs"));
}

}  // namespace
}  // namespace kern::cli
