// config.json seccomp -> BPF: the action mapping, and the compiled program loaded into a forked
// child, where the calls it denies fail with the errno asked for and the others still work.
#include <gtest/gtest.h>

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "runtime/bundle/config.h"
#include "runtime/bundle/seccomp_cache.h"
#include "runtime/bundle/seccomp_compile.h"
#include "tests/unit/seccomp_probe.h"

namespace kern::bundle {
namespace {

TEST(BundleSeccomp, ActionValues) {
  EXPECT_EQ(*seccomp_action_value("SCMP_ACT_ALLOW", std::nullopt, "p"), SCMP_ACT_ALLOW);
  EXPECT_EQ(*seccomp_action_value("SCMP_ACT_ERRNO", std::nullopt, "p"), SCMP_ACT_ERRNO(EPERM));  // the spec's default
  EXPECT_EQ(*seccomp_action_value("SCMP_ACT_ERRNO", 38u, "p"), SCMP_ACT_ERRNO(38));
  EXPECT_EQ(*seccomp_action_value("SCMP_ACT_KILL", std::nullopt, "p"), SCMP_ACT_KILL_THREAD);
  EXPECT_EQ(*seccomp_action_value("SCMP_ACT_KILL_PROCESS", std::nullopt, "p"), SCMP_ACT_KILL_PROCESS);
  auto bad = seccomp_action_value("SCMP_ACT_ALLOW", 1u, "linux.seccomp.syscalls[0]");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().what(), "linux.seccomp.syscalls[0]: an errno return is given but SCMP_ACT_ALLOW takes none");
  EXPECT_EQ(*seccomp_action_value("SCMP_ACT_NOTIFY", std::nullopt, "p"), SCMP_ACT_NOTIFY);
}

Seccomp parse(const char* linux_seccomp) {
  std::string doc = std::string(R"({"ociVersion": "1.2.0", "linux": {"seccomp": )") + linux_seccomp + "}}";
  auto c = parse_config(doc);
  EXPECT_TRUE(c.has_value()) << c.error().what();
  return *c->linux_config->seccomp;
}

// Runs `body` in a forked child under `prog`; returns the child's exit code.
template <typename F>
int run_under(const CompiledSeccomp& prog, F body) {
  pid_t pid = fork();
  if (pid == 0) {
    struct sock_fprog fp = {static_cast<unsigned short>(prog.program.size()),
                            const_cast<struct sock_filter*>(prog.program.data())};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(90);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0) _exit(91);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(BundleSeccomp, CompiledProgramDeniesWhatTheDocumentDenies) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  Seccomp s = parse(R"({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
    "syscalls": [{"names": ["getppid", "no_such_call_in_any_kernel"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
                 {"names": ["getpid"], "action": "SCMP_ACT_ALLOW"},
                 {"names": ["dup3"], "action": "SCMP_ACT_ERRNO",
                  "args": [{"index": 2, "value": 1, "op": "SCMP_CMP_EQ"}]}]})");
  auto prog = compile_seccomp(s);
  ASSERT_TRUE(prog.has_value()) << prog.error().what();
  EXPECT_FALSE(prog->program.empty());
  // Positive control: outside the filter getppid works.
  ASSERT_GT(syscall(SYS_getppid), 0);
  EXPECT_EQ(run_under(*prog, [] { return syscall(SYS_getppid) == -1 && errno == 38 ? 0 : 1; }), 0);
  EXPECT_EQ(run_under(*prog, [] { return syscall(SYS_getpid) > 0 ? 0 : 1; }), 0);
  // dup3 with flags == 1 is denied (EPERM, the default errno); with flags 0 (O_CLOEXEC is not 1) allowed.
  EXPECT_EQ(run_under(*prog, [] { return syscall(SYS_dup3, 0, 50, 1) == -1 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(run_under(*prog, [] { return syscall(SYS_dup3, 0, 50, 0) == 50 ? 0 : 1; }), 0);
}

TEST(BundleSeccomp, DefaultErrnoWithAllowlist) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  Seccomp s = parse(R"({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
    "syscalls": [{"names": ["exit", "exit_group", "getpid", "rt_sigreturn"], "action": "SCMP_ACT_ALLOW"},
                 {"names": ["getuid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]})");
  auto prog = compile_seccomp(s);
  ASSERT_TRUE(prog.has_value()) << prog.error().what();
  EXPECT_EQ(run_under(*prog, [] { return syscall(SYS_getpid) > 0 && syscall(SYS_getppid) == -1 && errno == 1 ? 0 : 1; }), 0);
}

TEST(BundleSeccomp, UnknownArchitectureRefused) {
  Seccomp s = parse(R"({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_VAX"]})");
  auto prog = compile_seccomp(s);
  ASSERT_FALSE(prog.has_value());
  EXPECT_EQ(prog.error().what(), "linux.seccomp.architectures[0]: libseccomp does not know SCMP_ARCH_VAX");
}

// The one entry file in a cache directory.
std::string only_entry(const std::string& dir) {
  std::string found;
  DIR* d = opendir(dir.c_str());
  if (!d) return found;
  while (struct dirent* e = readdir(d))
    if (e->d_name[0] != '.') found = dir + "/" + e->d_name;
  closedir(d);
  return found;
}

TEST(BundleSeccompCache, SecondCompileComesFromTheCacheAndIsTheSameProgram) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  char tmpl[] = "/tmp/kern-seccomp-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = std::string(tmpl) + "/@seccomp-cache";
  const char* doc = R"({"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]})";
  Seccomp s = parse(doc);
  bool hit = true;
  auto first = compile_seccomp_cached(s, dir, &hit);
  ASSERT_TRUE(first.has_value()) << first.error().what();
  EXPECT_FALSE(hit);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto second = compile_seccomp_cached(s, dir, &hit);
  ASSERT_TRUE(second.has_value()) << second.error().what();
  EXPECT_TRUE(hit);
  ASSERT_EQ(second->program.size(), first->program.size());
  EXPECT_EQ(std::memcmp(second->program.data(), first->program.data(), first->program.size() * sizeof(sock_filter)), 0);
  // The cached program is enforced as the compiled one is (and getppid works outside it).
  ASSERT_GT(syscall(SYS_getppid), 0);
  EXPECT_EQ(run_under(*second, [] { return syscall(SYS_getppid) == -1 && errno == 38 ? 0 : 1; }), 0);

  // Another profile is not served the first one's program.
  Seccomp other = parse(R"({"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 39}]})");
  auto third = compile_seccomp_cached(other, dir, &hit);
  ASSERT_TRUE(third.has_value());
  EXPECT_FALSE(hit);
  EXPECT_EQ(run_under(*third, [] { return syscall(SYS_getppid) == -1 && errno == 39 ? 0 : 1; }), 0);
  EXPECT_NE(seccomp_profile_text(s), seccomp_profile_text(other));
  std::string cmd = std::string("rm -rf ") + tmpl;
  (void)!std::system(cmd.c_str());
}

TEST(BundleSeccompCache, DamagedOrForeignWritableEntryIsCompiledAgain) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  char tmpl[] = "/tmp/kern-seccomp-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = std::string(tmpl) + "/c";
  Seccomp s = parse(R"({"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]})");
  bool hit = false;
  ASSERT_TRUE(compile_seccomp_cached(s, dir, &hit).has_value());
  std::string entry = only_entry(dir);
  ASSERT_FALSE(entry.empty());
  // Cut short: not a program any more.
  ASSERT_EQ(truncate(entry.c_str(), 40), 0);
  auto again = compile_seccomp_cached(s, dir, &hit);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(hit);
  EXPECT_EQ(run_under(*again, [] { return syscall(SYS_getppid) == -1 && errno == 38 ? 0 : 1; }), 0);
  // Rewritten whole by that compile: served again...
  ASSERT_TRUE(compile_seccomp_cached(s, dir, &hit).has_value());
  EXPECT_TRUE(hit);
  // ...but not once others may write to it.
  ASSERT_EQ(chmod(only_entry(dir).c_str(), 0666), 0);
  ASSERT_TRUE(compile_seccomp_cached(s, dir, &hit).has_value());
  EXPECT_FALSE(hit);
  // Not the caller's: not served (as root, the entry given to nobody).
  if (geteuid() == 0) {
    ASSERT_TRUE(compile_seccomp_cached(s, dir, &hit).has_value());
    ASSERT_EQ(chown(only_entry(dir).c_str(), 65534, 65534), 0);
    ASSERT_TRUE(compile_seccomp_cached(s, dir, &hit).has_value());
    EXPECT_FALSE(hit);
  }
  // Another profile's program under this profile's file name (a forged or colliding entry): the
  // whole profile is compared, so it is compiled again, and enforces this profile.
  Seccomp other = parse(R"({"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 39}]})");
  std::string dir2 = std::string(tmpl) + "/d";
  ASSERT_TRUE(compile_seccomp_cached(other, dir2, &hit).has_value());
  std::string other_entry = only_entry(dir2);
  ASSERT_TRUE(compile_seccomp_cached(s, dir2, &hit).has_value());  // s's entry beside it
  {
    std::ifstream in(other_entry, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    DIR* d = opendir(dir2.c_str());
    ASSERT_NE(d, nullptr);
    while (struct dirent* e = readdir(d)) {
      std::string path = dir2 + "/" + e->d_name;
      if (e->d_name[0] == '.' || path == other_entry) continue;
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    }
    closedir(d);
  }
  auto forged = compile_seccomp_cached(s, dir2, &hit);
  ASSERT_TRUE(forged.has_value());
  EXPECT_FALSE(hit);
  EXPECT_EQ(run_under(*forged, [] { return syscall(SYS_getppid) == -1 && errno == 38 ? 0 : 1; }), 0);
  // No cache directory: compiled, never served.
  ASSERT_TRUE(compile_seccomp_cached(s, "", &hit).has_value());
  EXPECT_FALSE(hit);
  std::string cmd = std::string("rm -rf ") + tmpl;
  (void)!std::system(cmd.c_str());
}

}  // namespace
}  // namespace kern::bundle
