// The generated seccomp programs, loaded for real: each check runs a call in a forked child that
// installs the program (no_new_privs first, as the box does) and compares the answer with a
// sibling child that makes the same call without a filter (the discriminant: outside the filter
// the call succeeds or fails differently). Also KERN_SECCOMP parsing.
#include <elf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/seccomp_filter.h"
#include "tests/unit/seccomp_probe.h"
#include "tests/unit/test_require.h"

namespace kern {
namespace {

enum class Filter { none, allowlist, denylist };
const Filter kBoth[] = {Filter::allowlist, Filter::denylist};

const char* filter_name(Filter f) {
  switch (f) {
    case Filter::none: return "no filter";
    case Filter::allowlist: return "allowlist";
    case Filter::denylist: return "denylist";
  }
  return "?";
}

// What happened to one call in a child.
struct Outcome {
  bool killed = false;  // by a signal before answering
  int signal = 0;
  long ret = 0;
  int err = 0;  // errno when ret < 0, else 0
  std::string data;  // extra bytes the call wrote (sweeps)

  bool sigsys() const { return killed && signal == SIGSYS; }
  // "ok", "killed", or the errno name: the answer without the returned value.
  std::string kind() const { return killed ? "killed" : ret >= 0 ? "ok" : errno_name(err); }
  std::string describe() const {
    if (killed) return std::string("killed by ") + (sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
    if (ret < 0) return errno_name(err);
    return "ok (" + std::to_string(ret) + ")";
  }
};

// The call runs in the child after the filter is in place; it returns the syscall's result and
// may write extra bytes to `out_fd`. Children only use raw syscalls and _exit.
using Call = std::function<long(int out_fd)>;

Outcome run(Filter f, const Call& call) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) ADD_FAILURE() << "pipe2: " << std::strerror(errno);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    int e = 0;
    if (f == Filter::none) {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) e = errno;
    } else {
      e = install_seccomp_raw(seccomp_program(f == Filter::allowlist ? SeccompMode::allowlist
                                                                     : SeccompMode::denylist));
    }
    if (e != 0) _exit(100);
    errno = 0;
    long header[2] = {0, 0};
    // Reserve the header position: the call may stream data first, so the result goes last.
    long r = call(p[1]);
    header[0] = r;
    header[1] = r < 0 ? errno : 0;
    if (write(p[1], header, sizeof header) != static_cast<ssize_t>(sizeof header)) _exit(101);
    _exit(0);
  }
  close(p[1]);
  std::string bytes;
  char buf[65536];
  for (;;) {
    ssize_t n = read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Outcome o;
  if (WIFSIGNALED(status)) {
    o.killed = true;
    o.signal = WTERMSIG(status);
    return o;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << filter_name(f) << ": child failed to set up (status " << status << ")";
  if (bytes.size() < 2 * sizeof(long)) {
    ADD_FAILURE() << filter_name(f) << ": child wrote no result";
    return o;
  }
  long header[2];
  std::memcpy(header, bytes.data() + bytes.size() - sizeof header, sizeof header);
  o.ret = header[0];
  o.err = static_cast<int>(header[1]);
  o.data = bytes.substr(0, bytes.size() - sizeof header);
  return o;
}

class SeccompFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = testing::seccomp_filter_load_unavailable();
    if (why.empty()) return;
    if (testing::test_required("seccomp-filter-load")) FAIL() << "required by KERN_TEST_REQUIRE: " << why;
    GTEST_SKIP() << why;
  }
};

// --- KERN_SECCOMP -------------------------------------------------------------------------

TEST(SeccompEnv, UnsetOrEmptyIsAllowlist) {
  EXPECT_EQ(*parse_seccomp_env(nullptr), SeccompMode::allowlist);
  EXPECT_EQ(*parse_seccomp_env(""), SeccompMode::allowlist);
}

TEST(SeccompEnv, TheTwoModes) {
  EXPECT_EQ(*parse_seccomp_env("allowlist"), SeccompMode::allowlist);
  EXPECT_EQ(*parse_seccomp_env("denylist"), SeccompMode::denylist);
  EXPECT_STREQ(seccomp_mode_name(SeccompMode::allowlist), "allowlist");
  EXPECT_STREQ(seccomp_mode_name(SeccompMode::denylist), "denylist");
}

TEST(SeccompEnv, AnythingElseIsAUsageErrorNamingTheAllowedValues) {
  for (const char* bad : {"none", "off", "0", "Allowlist", " allowlist", "denylist ", "unconfined"}) {
    auto r = parse_seccomp_env(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage) << bad;
    EXPECT_NE(r.error().what().find("allowlist, denylist"), std::string::npos) << r.error().what();
    EXPECT_NE(r.error().what().find(std::string("\"") + bad + "\""), std::string::npos) << r.error().what();
  }
}

TEST(SeccompProgram, BothProgramsExistAndDiffer) {
  SeccompProgram a = seccomp_program(SeccompMode::allowlist);
  SeccompProgram d = seccomp_program(SeccompMode::denylist);
  ASSERT_NE(a.filter, nullptr);
  ASSERT_NE(d.filter, nullptr);
  EXPECT_GT(a.len, 0);
  EXPECT_GT(d.len, 0);
  EXPECT_LE(a.len, 4096);
  EXPECT_NE(a.filter, d.filter);
  // The allowlist carries the list of allowed calls; the denylist only the refusals.
  EXPECT_GT(a.len, d.len);
}

// The kernel JITs the program at every box's start, so its length is paid each time: the compact
// form (runtime/seccomp/compact.h) keeps the ~330-call allowlist to a few instructions per run of
// numbers with one verdict (libseccomp's own program had 668 instructions).
TEST(SeccompProgram, TheAllowlistIsCompact) {
  EXPECT_LT(seccomp_program(SeccompMode::allowlist).len, 256);
  EXPECT_LT(seccomp_program(SeccompMode::allowlist_audit).len, 256);
}

TEST(SeccompProgram, InstallRejectsAnEmptyProgram) {
  EXPECT_EQ(install_seccomp_raw(SeccompProgram{nullptr, 0}), EINVAL);
}

// --- Positive controls --------------------------------------------------------------------

TEST_F(SeccompFilter, OrdinaryCallsWork) {
  for (Filter f : kBoth) {
    Outcome o = run(f, [](int) { return syscall(SYS_getpid); });
    EXPECT_FALSE(o.killed) << filter_name(f) << ": " << o.describe();
    EXPECT_GT(o.ret, 0) << filter_name(f) << ": " << o.describe();

    // clone without a namespace flag (what fork() does) is allowed.
    Outcome c = run(f, [](int) -> long {
      long r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
      if (r == 0) _exit(7);
      int status = 0;
      if (r > 0 && waitpid(static_cast<pid_t>(r), &status, 0) == r)
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return r;
    });
    EXPECT_EQ(c.ret, 7) << filter_name(f) << ": fork-style clone: " << c.describe();

    // An ordinary ioctl is not caught by the TIOCSTI rule.
    Outcome i = run(f, [](int) -> long {
      int p[2];
      if (pipe(p) != 0) return -1;
      int n = -1;
      return ioctl(p[0], FIONREAD, &n) == 0 ? n : -1;
    });
    EXPECT_EQ(i.ret, 0) << filter_name(f) << ": FIONREAD: " << i.describe();

    Outcome u = run(f, [](int) -> long {
      long fd = syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
      return fd < 0 ? fd : 0;
    });
    EXPECT_EQ(u.ret, 0) << filter_name(f) << ": socket(AF_UNIX): " << u.describe();
  }
}

// Real programs run to completion under the allowlist (it is deny-by-default, so a missing
// entry shows up here as a failing command).
TEST_F(SeccompFilter, AllowlistRunsRealPrograms) {
  struct Prog {
    const char* path;
    std::vector<const char*> argv;
  };
  std::vector<Prog> progs = {
      {"/bin/sh", {"sh", "-c", "echo hi | cat >/dev/null && ls / >/dev/null && x=$(date) && "
                               "t=$(mktemp) && echo a >\"$t\" && sort \"$t\" >/dev/null && rm \"$t\""}},
  };
  if (access("/usr/bin/python3", X_OK) == 0)
    progs.push_back({"/usr/bin/python3", {"python3", "-c",
                                          "import os, subprocess, threading, socket, tempfile, json\n"
                                          "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                                          "assert subprocess.run(['true']).returncode == 0\n"
                                          "with tempfile.TemporaryDirectory() as d: open(d + '/x', 'w').write('y')\n"
                                          "socket.socketpair()\n"}});
  if (access("/usr/bin/node", X_OK) == 0)
    progs.push_back({"/usr/bin/node", {"node", "-e",
                                       "require('fs').readdirSync('/'); require('child_process')"
                                       ".execFileSync('true'); setTimeout(() => {}, 10)"}});
  for (const Prog& prog : progs) {
    Outcome o = run(Filter::allowlist, [&](int) -> long {
      pid_t child = fork();
      if (child == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        std::vector<char*> argv;
        for (const char* a : prog.argv) argv.push_back(const_cast<char*>(a));
        argv.push_back(nullptr);
        char* envp[] = {const_cast<char*>("PATH=/usr/local/bin:/usr/bin:/bin"), nullptr};
        execve(prog.path, argv.data(), envp);
        _exit(127);
      }
      int status = 0;
      if (waitpid(child, &status, 0) != child) return -1;
      if (WIFSIGNALED(status)) return 1000 + WTERMSIG(status);
      return WEXITSTATUS(status);
    });
    EXPECT_EQ(o.ret, 0) << prog.path << " under the allowlist: exit " << o.ret << " (" << o.describe() << ")";
  }
}

// The modern calls libc and runtimes probe first: the allowlist must give the same answer as no
// filter (an ENOSYS here would silently push programs onto slower or missing fallbacks).
TEST_F(SeccompFilter, ModernCallsAreAllowed) {
  struct Modern {
    const char* name;
    Call call;
  };
  static char buf[64];
  const Modern calls[] = {
      {"getrandom", [](int) { return syscall(SYS_getrandom, buf, 8, 0); }},
      {"openat2", [](int) { return syscall(SYS_openat2, AT_FDCWD, "/", nullptr, 0); }},
      {"statx", [](int) { return syscall(SYS_statx, AT_FDCWD, "/", 0, 0x7ff, buf); }},
      {"faccessat2", [](int) { return syscall(SYS_faccessat2, AT_FDCWD, "/", R_OK, 0); }},
      {"epoll_pwait2", [](int) { return syscall(SYS_epoll_pwait2, -1, nullptr, 0, nullptr, nullptr, 0); }},
      {"close_range", [](int) { return syscall(SYS_close_range, 1000, 1010, 0); }},
      {"rseq", [](int) { return syscall(SYS_rseq, nullptr, 0, 0, 0); }},
      {"pidfd_open", [](int) { return syscall(SYS_pidfd_open, getpid(), 0); }},
      {"pidfd_send_signal", [](int) { return syscall(SYS_pidfd_send_signal, -1, 0, nullptr, 0); }},
      {"memfd_create", [](int) { return syscall(SYS_memfd_create, "kern-test", 0); }},
      {"copy_file_range", [](int) { return syscall(SYS_copy_file_range, -1, nullptr, -1, nullptr, 0, 0); }},
      {"futex_waitv", [](int) { return syscall(SYS_futex_waitv, nullptr, 0, 0, nullptr, 0); }},
      {"fchmodat2", [](int) { return syscall(452, AT_FDCWD, "/nonexistent-kern", 0644, 0); }},
      {"seccomp (query)", [](int) { return syscall(SYS_seccomp, 2 /* GET_ACTION_AVAIL */, 0, buf); }},
      {"landlock_create_ruleset", [](int) { return syscall(SYS_landlock_create_ruleset, nullptr, 0, 1); }},
      {"membarrier", [](int) { return syscall(SYS_membarrier, 0, 0, 0); }},
      {"prctl", [](int) { return syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0); }},
      {"capget", [](int) { return syscall(SYS_capget, nullptr, nullptr); }},
      {"setresuid (no change)", [](int) { return syscall(SYS_setresuid, -1, -1, -1); }},
      {"execveat (bad fd)", [](int) { return syscall(SYS_execveat, -1, "", nullptr, nullptr, 0); }},
      {"vfork-free wait4", [](int) { return syscall(SYS_wait4, -1, nullptr, WNOHANG, nullptr); }},
  };
  for (const Modern& m : calls) {
    Outcome outside = run(Filter::none, m.call);
    Outcome allow = run(Filter::allowlist, m.call);
    EXPECT_EQ(allow.kind(), outside.kind())
        << m.name << ": allowlist " << allow.describe() << ", no filter " << outside.describe();
  }
}

// --- Killed: the escape class ---------------------------------------------------------------

struct Case {
  std::string name;
  Call call;
};

long raw_clone(unsigned long flags) {
  long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (r == 0) _exit(0);
  if (r > 0) waitpid(static_cast<pid_t>(r), nullptr, 0);
  return r;
}

const char* const kNoSuchPath = "/nonexistent-kern-seccomp-test";

std::vector<Case> killed_cases() {
  std::vector<Case> c = {
      {"mount", [](int) { return static_cast<long>(mount(nullptr, kNoSuchPath, nullptr, 0, nullptr)); }},
      {"umount2", [](int) { return static_cast<long>(umount2(kNoSuchPath, 0)); }},
      {"pivot_root", [](int) { return syscall(SYS_pivot_root, kNoSuchPath, kNoSuchPath); }},
      {"open_tree", [](int) { return syscall(SYS_open_tree, -1, kNoSuchPath, 0); }},
      {"move_mount", [](int) { return syscall(SYS_move_mount, -1, "", -1, "", 0); }},
      {"fsopen", [](int) { return syscall(SYS_fsopen, "kern-no-such-fs", 0); }},
      {"fsconfig", [](int) { return syscall(SYS_fsconfig, -1, 0, nullptr, nullptr, 0); }},
      {"fsmount", [](int) { return syscall(SYS_fsmount, -1, 0, 0); }},
      {"fspick", [](int) { return syscall(SYS_fspick, -1, kNoSuchPath, 0); }},
      {"mount_setattr", [](int) { return syscall(SYS_mount_setattr, -1, kNoSuchPath, 0, nullptr, 0); }},
      {"open_tree_attr", [](int) { return syscall(467, -1, kNoSuchPath, 0, nullptr, 0); }},
      {"unshare(NEWUSER)", [](int) { return static_cast<long>(unshare(CLONE_NEWUSER)); }},
      {"setns", [](int) { return static_cast<long>(setns(-1, 0)); }},
      {"bpf", [](int) { return syscall(SYS_bpf, BPF_MAP_CREATE, nullptr, 0); }},
      {"kexec_load", [](int) { return syscall(SYS_kexec_load, 0, 0, nullptr, 0); }},
      {"kexec_file_load", [](int) { return syscall(SYS_kexec_file_load, -1, -1, 0, nullptr, 0); }},
      {"init_module", [](int) { return syscall(SYS_init_module, nullptr, 0, ""); }},
      {"finit_module", [](int) { return syscall(SYS_finit_module, -1, "", 0); }},
      {"delete_module", [](int) { return syscall(SYS_delete_module, "kern_no_such_module", O_NONBLOCK); }},
      // A wrong magic number: refused before anything happens, even for root.
      {"reboot", [](int) { return syscall(SYS_reboot, 0, 0, 0, nullptr); }},
      {"swapon", [](int) { return syscall(SYS_swapon, kNoSuchPath, 0); }},
      {"swapoff", [](int) { return syscall(SYS_swapoff, kNoSuchPath); }},
      {"ptrace", [](int) { return syscall(SYS_ptrace, PTRACE_PEEKUSER, 1, 0, 0); }},
      {"process_vm_readv", [](int) { return syscall(SYS_process_vm_readv, getpid(), nullptr, 0, nullptr, 0, 0); }},
      {"process_vm_writev", [](int) { return syscall(SYS_process_vm_writev, getpid(), nullptr, 0, nullptr, 0, 0); }},
#if defined(__x86_64__)
      // The x32 ABI: a native-arch syscall number with bit 30 set (getpid here).
      {"x32 getpid", [](int) { return syscall(39 | 0x40000000); }},
#endif
  };
  for (unsigned long flag : {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                             CLONE_NEWNET, CLONE_NEWCGROUP}) {
    char name[32];
    std::snprintf(name, sizeof name, "clone(0x%lx)", flag);
    c.push_back({name, [flag](int) { return raw_clone(flag); }});
  }
  // Namespace flag mixed with ordinary ones, and with bits above 32 set.
  c.push_back({"clone(NEWUSER|VM-less fork flags|high bits)", [](int) {
                 return raw_clone(CLONE_NEWUSER | CLONE_CHILD_SETTID | (1UL << 40));
               }});
  return c;
}

TEST_F(SeccompFilter, EscapeClassIsKilledInBothModes) {
  for (const Case& c : killed_cases()) {
    Outcome outside = run(Filter::none, c.call);
    EXPECT_FALSE(outside.sigsys()) << c.name << " without a filter: " << outside.describe();
    for (Filter f : kBoth) {
      Outcome o = run(f, c.call);
      EXPECT_TRUE(o.sigsys()) << c.name << " under " << filter_name(f) << ": " << o.describe()
                              << " (outside: " << outside.describe() << ")";
    }
  }
}

#if defined(__x86_64__)
TEST_F(SeccompFilter, I386CallsAreKilled) {
  auto int80_getpid = [](int) -> long {
    long ret = 20;  // __NR_getpid on i386
    asm volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
    return ret;
  };
  Outcome outside = run(Filter::none, int80_getpid);
  if (outside.killed)
    GTEST_SKIP() << "int 0x80 dies without a filter too (" << outside.describe()
                 << "): this kernel has no i386 emulation, nothing to discriminate";
  EXPECT_GT(outside.ret, 0) << outside.describe();
  for (Filter f : kBoth) {
    Outcome o = run(f, int80_getpid);
    EXPECT_TRUE(o.sigsys()) << filter_name(f) << ": " << o.describe();
  }
}
#elif defined(__aarch64__)
// An AArch32 program: getpid, then exit(42). A kernel with COMPAT on a core with AArch32 at EL0
// runs it (arch AUDIT_ARCH_ARM), so the filter, which holds only aarch64, must kill it at its
// first call.
std::string aarch32_getpid_exit42() {
  const uint32_t code[] = {
      0xe3a07014,  // mov r7, #20 (getpid)
      0xef000000,  // svc #0
      0xe3a0002a,  // mov r0, #42
      0xe3a07001,  // mov r7, #1 (exit)
      0xef000000,  // svc #0
  };
  constexpr uint32_t kBase = 0x10000;
  Elf32_Ehdr eh{};
  Elf32_Phdr ph{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS32;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_ARM;
  eh.e_version = EV_CURRENT;
  eh.e_entry = kBase + sizeof eh + sizeof ph;
  eh.e_phoff = sizeof eh;
  eh.e_flags = EF_ARM_EABI_VER5;  // the kernel runs no AArch32 binary without an EABI version
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof ph;
  eh.e_phnum = 1;
  ph.p_type = PT_LOAD;
  ph.p_vaddr = ph.p_paddr = kBase;
  ph.p_filesz = ph.p_memsz = sizeof eh + sizeof ph + sizeof code;
  ph.p_flags = PF_R | PF_X;
  ph.p_align = 0x1000;
  std::string elf(reinterpret_cast<const char*>(&eh), sizeof eh);
  elf.append(reinterpret_cast<const char*>(&ph), sizeof ph);
  elf.append(reinterpret_cast<const char*>(code), sizeof code);
  return elf;
}

// The wait status of the AArch32 program run under `f`, or of _exit(126) when exec refused it.
int run_aarch32(Filter f, int fd) {
  pid_t pid = fork();
  if (pid == 0) {
    int e = f == Filter::none ? (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno)
                              : install_seccomp_raw(seccomp_program(f == Filter::allowlist ? SeccompMode::allowlist
                                                                                           : SeccompMode::denylist));
    if (e != 0) _exit(100);
    char* argv[] = {const_cast<char*>("aarch32"), nullptr};
    char* envp[] = {nullptr};
    syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
    _exit(126);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST_F(SeccompFilter, AArch32CallsAreKilled) {
  std::string elf = aarch32_getpid_exit42();
  int fd = memfd_create("kern-aarch32", 0);
  ASSERT_GE(fd, 0) << "memfd_create: " << std::strerror(errno);
  ASSERT_EQ(write(fd, elf.data(), elf.size()), static_cast<ssize_t>(elf.size()));
  int outside = run_aarch32(Filter::none, fd);
  if (!WIFEXITED(outside) || WEXITSTATUS(outside) != 42) {
    close(fd);
    KERN_SKIP_UNLESS_REQUIRED("aarch32-el0", "an AArch32 program does not run here without a filter either (wait "
                                             "status " + std::to_string(outside) +
                                             "): no COMPAT kernel or no AArch32 at EL0, nothing to discriminate");
  }
  for (Filter f : kBoth) {
    int st = run_aarch32(f, fd);
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) << filter_name(f) << ": wait status " << st;
  }
  close(fd);
}
#endif

// --- ENOSYS and errno answers ---------------------------------------------------------------

struct Answer {
  const char* name;
  Call call;
  int allowlist_errno;
  int denylist_errno;
};

long perf_open_self(int) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

std::vector<Answer> answers() {
  return {
      {"clone3", [](int) { return syscall(SYS_clone3, nullptr, 0); }, ENOSYS, ENOSYS},
      {"io_uring_setup", [](int) { return syscall(SYS_io_uring_setup, 1, nullptr); }, ENOSYS, ENOSYS},
      {"io_uring_enter", [](int) { return syscall(SYS_io_uring_enter, -1, 0, 0, 0, nullptr, 0); }, ENOSYS, ENOSYS},
      {"io_uring_register", [](int) { return syscall(SYS_io_uring_register, -1, 0, nullptr, 0); }, ENOSYS, ENOSYS},
      {"userfaultfd", [](int) { return syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */); },
       ENOSYS, ENOSYS},
      {"perf_event_open", perf_open_self, ENOSYS, ENOSYS},
      {"add_key", [](int) { return syscall(SYS_add_key, "user", "kern-test", "x", 1, -3 /* session */); },
       ENOSYS, ENOSYS},
      {"request_key", [](int) { return syscall(SYS_request_key, "user", "kern-no-such-key", nullptr, 0); },
       ENOSYS, ENOSYS},
      {"keyctl", [](int) { return syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3, 0); }, ENOSYS, ENOSYS},
      {"syslog", [](int) { return syscall(SYS_syslog, 10 /* SIZE_BUFFER */, nullptr, 0); }, ENOSYS, ENOSYS},
      {"open_by_handle_at", [](int) { return syscall(SYS_open_by_handle_at, -1, nullptr, 0); }, ENOSYS, ENOSYS},
      // Not on the allowlist, harmless, and never ENOSYS outside: EPERM unprivileged, ENOENT
      // for root (the path does not exist, so accounting is not touched).
      {"acct", [](int) { return syscall(SYS_acct, "/nonexistent-kern-seccomp-test/acct"); }, ENOSYS, 0},
      {"personality(ADDR_NO_RANDOMIZE)", [](int) { return syscall(SYS_personality, ADDR_NO_RANDOMIZE); },
       ENOSYS, 0},
      {"TIOCSTI", [](int) -> long {
         int fd = open("/dev/null", O_RDONLY);
         char c = 'x';
         return ioctl(fd, TIOCSTI, &c);
       }, EPERM, EPERM},
      {"TIOCSTI with the upper half set", [](int) -> long {
         int fd = open("/dev/null", O_RDONLY);
         char c = 'x';
         return syscall(SYS_ioctl, fd, (1UL << 32) | TIOCSTI, &c);
       }, EPERM, EPERM},
      {"TIOCLINUX", [](int) -> long {
         int fd = open("/dev/null", O_RDONLY);
         char sub = 0;
         return syscall(SYS_ioctl, fd, 0xffffffff00000000UL | TIOCLINUX, &sub);
       }, EPERM, EPERM},
      {"socket(AF_VSOCK)", [](int) { return syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0); },
       EAFNOSUPPORT, EAFNOSUPPORT},
      {"socket(AF_VSOCK with the upper half set)",
       [](int) { return syscall(SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM, 0); }, EAFNOSUPPORT,
       EAFNOSUPPORT},
  };
}

TEST_F(SeccompFilter, EnosysAndErrnoAnswers) {
  for (const Answer& a : answers()) {
    Outcome outside = run(Filter::none, a.call);
    EXPECT_FALSE(outside.killed) << a.name << " outside: " << outside.describe();
    for (Filter f : kBoth) {
      int want = f == Filter::allowlist ? a.allowlist_errno : a.denylist_errno;
      Outcome o = run(f, a.call);
      if (want == 0) {
        // No rule: the answer is whatever the kernel gives without a filter.
        EXPECT_EQ(o.describe(), outside.describe()) << a.name << " under " << filter_name(f);
        continue;
      }
      EXPECT_FALSE(o.killed) << a.name << " under " << filter_name(f) << ": " << o.describe();
      EXPECT_LT(o.ret, 0) << a.name << " under " << filter_name(f) << ": " << o.describe();
      EXPECT_EQ(o.err, want) << a.name << " under " << filter_name(f) << ": " << o.describe();
    }
    int filtered = a.allowlist_errno;
    // The discriminant. The one place a host can legitimately agree: no vsock support at all.
    if (outside.ret < 0 && outside.err == filtered && filtered == EAFNOSUPPORT) {
      std::printf("note: %s gives EAFNOSUPPORT on this host without a filter too\n", a.name);
      continue;
    }
    EXPECT_FALSE(outside.ret < 0 && outside.err == filtered)
        << a.name << " gives " << errno_name(filtered) << " without a filter too: nothing is shown";
  }
}

TEST_F(SeccompFilter, PersonalityQueryIsAllowed) {
  for (Filter f : kBoth) {
    Outcome o = run(f, [](int) { return syscall(SYS_personality, 0xffffffffUL); });
    EXPECT_GE(o.ret, 0) << filter_name(f) << ": " << o.describe();
  }
}

// Every 16-bit ioctl request on /dev/null, and the terminal range with garbage in the upper half:
// the filtered answer equals the unfiltered one except for TIOCSTI and TIOCLINUX, which are
// EPERM. This shows the argument rules neither leak nor catch anything else.
TEST_F(SeccompFilter, IoctlRuleCatchesExactlyTheTwoRequests) {
  auto sweep = [](int out) -> long {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    std::vector<unsigned char> res;
    auto one = [&](unsigned long req) {
      long r = syscall(SYS_ioctl, fd, req, 0);
      res.push_back(static_cast<unsigned char>(r < 0 ? errno : 0));
    };
    for (unsigned long req = 0; req <= 0xffff; ++req) one(req);
    for (unsigned long high : {1UL << 32, 0xffffffff00000000UL, 0x8000000000000000UL})
      for (unsigned long req = 0x5400; req <= 0x54ff; ++req) one(high | req);
    if (write(out, res.data(), res.size()) != static_cast<ssize_t>(res.size())) return -1;
    return 0;
  };
  Outcome outside = run(Filter::none, sweep);
  ASSERT_EQ(outside.ret, 0) << outside.describe();
  auto is_terminal_injection = [](size_t i) {
    unsigned long req = i <= 0xffff ? i : 0x5400 + (i - 0x10000) % 0x100;
    return req == TIOCSTI || req == TIOCLINUX;
  };
  for (Filter f : kBoth) {
    Outcome o = run(f, sweep);
    ASSERT_EQ(o.ret, 0) << filter_name(f) << ": " << o.describe();
    ASSERT_EQ(o.data.size(), outside.data.size());
    int caught = 0;
    for (size_t i = 0; i < o.data.size(); ++i) {
      if (is_terminal_injection(i)) {
        EXPECT_EQ(o.data[i], EPERM) << filter_name(f) << " index " << i;
        ++caught;
      } else if (o.data[i] != outside.data[i]) {
        ADD_FAILURE() << filter_name(f) << ": request index " << i << " gives "
                      << errno_name(static_cast<unsigned char>(o.data[i])) << ", without a filter "
                      << errno_name(static_cast<unsigned char>(outside.data[i]));
      }
    }
    EXPECT_EQ(caught, 2 + 2 * 3) << filter_name(f);
  }
}

// The "everything else" difference between the modes, on a call that is harmless and never
// ENOSYS outside.
TEST_F(SeccompFilter, UnlistedCallIsEnosysOnlyInTheAllowlist) {
  auto acct = [](int) { return syscall(SYS_acct, "/nonexistent-kern-seccomp-test/acct"); };
  Outcome outside = run(Filter::none, acct);
  ASSERT_LT(outside.ret, 0);
  ASSERT_NE(outside.err, ENOSYS);
  Outcome allow = run(Filter::allowlist, acct);
  Outcome deny = run(Filter::denylist, acct);
  EXPECT_EQ(allow.err, ENOSYS) << allow.describe();
  EXPECT_EQ(deny.err, outside.err) << deny.describe();
}

}  // namespace
}  // namespace kern
