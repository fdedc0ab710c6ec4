// KERN_SECCOMP=allowlist-audit (runtime/seccomp_audit.h): the tally and its records, and the
// generated audit program loaded for real in a forked child. A call on no list (kcmp) runs under
// the audit program while kern's listener answers, and is recorded; the same call answers ENOSYS
// under the plain allowlist (the discriminant) and under the audit program once no listener is
// held (the mode fails closed when kern is gone).
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "runtime/seccomp_audit.h"
#include "runtime/seccomp_filter.h"
#include "runtime/sys/fd_passing.h"
#include "tests/unit/seccomp_probe.h"

namespace kern {
namespace {

TEST(SeccompAudit, ParsesAndNamesTheMode) {
  EXPECT_EQ(*parse_seccomp_env("allowlist-audit"), SeccompMode::allowlist_audit);
  EXPECT_STREQ(seccomp_mode_name(SeccompMode::allowlist_audit), "allowlist-audit");
  SeccompProgram a = seccomp_program(SeccompMode::allowlist);
  SeccompProgram au = seccomp_program(SeccompMode::allowlist_audit);
  EXPECT_NE(a.filter, au.filter);
  EXPECT_GT(au.len, 0);
  EXPECT_STREQ(syscall_name(SYS_kcmp), "kcmp");
  EXPECT_STREQ(syscall_name(SYS_read), "read");
  EXPECT_EQ(syscall_name(-1), nullptr);
  EXPECT_EQ(syscall_name(100000), nullptr);
}

TEST(SeccompAudit, TallyCountsAndKeepsTheFirstCaller) {
  AuditTally t;
  int asked = 0;
  auto comm = [&](pid_t p) {
    ++asked;
    return "cmd" + std::to_string(p);
  };
  t.record(SYS_kcmp, 10, comm);
  t.record(SYS_sethostname, 11, comm);
  t.record(SYS_kcmp, 12, comm);
  t.record(99999, 13, comm);
  auto c = t.calls();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(asked, 3);  // only the first sight of each call
  EXPECT_EQ(c[0].name, "kcmp");
  EXPECT_EQ(c[0].count, 2u);
  EXPECT_EQ(c[0].first_pid, 10);
  EXPECT_EQ(c[0].first_command, "cmd10");
  EXPECT_EQ(c[1].name, "sethostname");
  EXPECT_EQ(c[2].name, "syscall_99999");

  auto j = nlohmann::json::parse(audit_record("b1", c[0]));
  EXPECT_EQ(j["event"], "seccomp_audit");
  EXPECT_EQ(j["name"], "b1");
  EXPECT_EQ(j["syscall"], "kcmp");
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["first_command"], "cmd10");
  AuditedCall odd = c[0];
  odd.first_command = "\xff\xfe";
  EXPECT_TRUE(nlohmann::json::accept(audit_record("b1", odd)));

  std::string s = audit_summary(c);
  EXPECT_NE(s.find("3 system calls outside the allowlist ran"), std::string::npos) << s;
  EXPECT_NE(s.find("kcmp x2 (first by cmd10)"), std::string::npos) << s;
  EXPECT_NE(audit_summary({}).find("no system call outside the allowlist"), std::string::npos);
}

enum class Listen { kern, dropped };

// The child loads `mode`'s program (with a listener for the audit one, sent to the parent or
// dropped), calls kcmp on itself and writes {ret, errno} to the pipe.
struct ChildResult {
  long ret = 0;
  int err = 0;
  std::vector<AuditedCall> calls;
};

ChildResult run_kcmp(SeccompMode mode, Listen listen) {
  int sv[2], p[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    close(p[0]);
    int e;
    if (mode == SeccompMode::allowlist_audit) {
      int listener = -1;
      e = install_seccomp_listener_raw(seccomp_program(mode), &listener);
      if (e == 0 && listen == Listen::kern) e = sys::send_fd_raw(sv[1], listener);
      close(listener);
    } else {
      e = install_seccomp_raw(seccomp_program(mode));
    }
    close(sv[1]);
    if (e != 0) _exit(100);
    errno = 0;
    long r = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0);
    long out[2] = {r, r < 0 ? errno : 0};
    if (write(p[1], out, sizeof out) != static_cast<ssize_t>(sizeof out)) _exit(101);
    _exit(0);
  }
  close(sv[1]);
  close(p[1]);
  std::unique_ptr<SeccompAuditor> auditor;
  if (mode == SeccompMode::allowlist_audit && listen == Listen::kern) {
    auto fd = sys::recv_fd(sv[0], "listener");
    EXPECT_TRUE(fd.has_value());
    if (fd) auditor = std::move(*SeccompAuditor::start(std::move(*fd)));
  }
  close(sv[0]);
  long out[2] = {0, 0};
  EXPECT_EQ(read(p[0], out, sizeof out), static_cast<ssize_t>(sizeof out));
  close(p[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ChildResult r{out[0], static_cast<int>(out[1]), {}};
  if (auditor) r.calls = auditor->finish();
  return r;
}

TEST(SeccompAudit, AnUnlistedCallRunsAndIsRecordedOnlyWhileKernListens) {
  KERN_SKIP_WITHOUT_SECCOMP_FILTERS();
  // Outside any filter kcmp of a process's own fd 0 with itself answers 0.
  errno = 0;
  long outside = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0);
  if (outside < 0 && errno == ENOSYS) GTEST_SKIP() << "this kernel has no kcmp (CONFIG_KCMP)";
  ASSERT_EQ(outside, 0) << errno;

  ChildResult plain = run_kcmp(SeccompMode::allowlist, Listen::kern);
  EXPECT_EQ(plain.ret, -1);
  EXPECT_EQ(plain.err, ENOSYS);

  ChildResult audited = run_kcmp(SeccompMode::allowlist_audit, Listen::kern);
  EXPECT_EQ(audited.ret, 0) << errno_name(audited.err);
  ASSERT_EQ(audited.calls.size(), 1u);
  EXPECT_EQ(audited.calls[0].name, "kcmp");
  EXPECT_EQ(audited.calls[0].count, 1u);
  EXPECT_GT(audited.calls[0].first_pid, 0);

  ChildResult dropped = run_kcmp(SeccompMode::allowlist_audit, Listen::dropped);
  EXPECT_EQ(dropped.ret, -1);
  EXPECT_EQ(dropped.err, ENOSYS);
}

}  // namespace
}  // namespace kern
