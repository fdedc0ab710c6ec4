// config.json seccomp -> BPF: the action mapping, and the compiled program loaded into a forked
// child, where the calls it denies fail with the errno asked for and the others still work.
#include <gtest/gtest.h>

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/bundle/config.h"
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

}  // namespace
}  // namespace kern::bundle
