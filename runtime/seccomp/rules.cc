// The seccomp policy of a box, as data. Build-time only: read by kern-seccomp-gen.
//
// The allowlist is what ordinary programs (glibc, musl, busybox, coreutils, bash, python3, node,
// compilers, package managers) call. It was drawn up from the syscalls those programs use and
// checked against the set container engines allow by default; calls that only a privileged
// process can use for something, or that exist to leave the box, are not on it.
#include "runtime/seccomp/rules.h"

#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>

namespace kern::seccomp_rules {
namespace {

const char* const kAllowed[] = {
    // Reading and writing open files.
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "lseek", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "flock", "fsync",
    "fdatasync", "sync", "syncfs", "sync_file_range", "fallocate", "ftruncate", "truncate",
    "readahead", "fadvise64", "sendfile", "splice", "tee", "vmsplice", "copy_file_range",
    "cachestat", "pipe", "pipe2",
    // Opening, looking up and listing paths.
    "open", "openat", "openat2", "creat", "access", "faccessat", "faccessat2", "stat", "lstat",
    "fstat", "newfstatat", "statx", "statfs", "fstatfs", "readlink", "readlinkat", "getdents",
    "getdents64", "getcwd", "chdir", "fchdir", "umask", "name_to_handle_at",
    // Changing the file tree the box owns.
    "mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
    "renameat2", "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat",
    "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes", "utimensat",
    "futimesat",
    // Extended attributes.
    "getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr", "listxattr",
    "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr", "getxattrat",
    "setxattrat", "listxattrat", "removexattrat", "file_getattr", "file_setattr",
    // Memory.
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock",
    "mlock2", "munlock", "mlockall", "munlockall", "remap_file_pages", "membarrier",
    "memfd_create", "memfd_secret", "pkey_alloc", "pkey_free", "pkey_mprotect",
    "map_shadow_stack", "mseal", "get_mempolicy", "set_mempolicy", "mbind",
    "set_mempolicy_home_node", "process_mrelease",
    // Randomness (hash seeds, TLS, CSPRNGs: node aborts without it).
    "getrandom",
    // Processes and threads. clone is allowed by a rule on its flags (see clone_namespace_flags);
    // clone3 answers ENOSYS because its flags sit in memory that seccomp cannot read, and libc
    // falls back to clone.
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "kill",
    "tkill", "tgkill", "getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp", "getsid",
    "setsid", "arch_prctl", "prctl", "set_tid_address", "set_robust_list", "get_robust_list",
    "rseq", "set_thread_area", "get_thread_area", "pidfd_open", "pidfd_send_signal",
    "restart_syscall",
    // Self-restriction: a box may narrow itself further.
    "seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    // Identity and capabilities, within what the box's user namespace and bounding set allow.
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid",
    "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid",
    "setgroups", "capget", "capset",
    // Scheduling, limits and accounting of the process itself.
    "getpriority", "setpriority", "sched_yield", "sched_getaffinity", "sched_setaffinity",
    "sched_getparam", "sched_setparam", "sched_getscheduler", "sched_setscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval",
    "sched_getattr", "sched_setattr", "ioprio_get", "ioprio_set", "getrlimit", "setrlimit",
    "prlimit64", "getrusage", "times", "sysinfo", "uname", "getcpu",
    // Signals.
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigpending",
    "rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "pause", "alarm",
    "signalfd", "signalfd4",
    // Time (reading clocks and sleeping; setting the clock needs CAP_SYS_TIME, always dropped,
    // and adjtimex/clock_adjtime only read without it).
    "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime",
    "timer_getoverrun", "timer_delete", "timerfd_create", "timerfd_settime", "timerfd_gettime",
    "adjtimex", "clock_adjtime",
    // Waiting for events.
    "select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "inotify_init",
    "inotify_init1", "inotify_add_watch", "inotify_rm_watch", "futex", "futex_waitv",
    "futex_wake", "futex_wait", "futex_requeue",
    // Sockets (socket itself has an argument rule: no AF_VSOCK).
    "socketpair", "bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername",
    "getsockopt", "setsockopt", "shutdown", "sendto", "recvfrom", "sendmsg", "recvmsg",
    "sendmmsg", "recvmmsg",
    // System V and POSIX IPC (the box has its own IPC namespace).
    "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl", "shmget",
    "shmat", "shmdt", "shmctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_notify", "mq_getsetattr",
    // Asynchronous I/O (the old interface; io_uring answers ENOSYS).
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
    // Reading the box's own mount table and security labels.
    "statmount", "listmount", "lsm_get_self_attr", "lsm_list_modules",
};

const char* const kKilled[] = {
    "mount", "umount2", "pivot_root",
    "open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr",
    "unshare", "setns",
    "bpf",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff",
    "ptrace", "process_vm_readv", "process_vm_writev",
};

const char* const kEnosys[] = {
    "clone3",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "userfaultfd", "perf_event_open",
    "add_key", "request_key", "keyctl",
    "syslog", "open_by_handle_at",
};

constexpr uint64_t kLow32 = 0xffffffffULL;

const uint64_t kTerminalInjection[] = {TIOCSTI, TIOCLINUX};
const uint64_t kVsock[] = {AF_VSOCK};
// The personas container engines allow: Linux, its 32-bit variant, the 2.6-uname variants, and
// 0xffffffff, which only queries. Others (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, foreign ABIs)
// weaken the process or select code paths nobody in a box needs.
const uint64_t kPersonas[] = {PER_LINUX, PER_LINUX32, UNAME26, uint64_t{UNAME26} | uint64_t{PER_LINUX32},
                              0xffffffffULL};

const ArgRule kArgRules[] = {
    {"ioctl", 1, kLow32, kTerminalInjection, Verdict::eperm, true},
    {"socket", 0, kLow32, kVsock, Verdict::eafnosupport, true},
    {"personality", 0, kLow32, kPersonas, Verdict::allow, false},
};

// Numbers of the common table: from 424 (pidfd_send_signal, Linux 5.1) on, every architecture
// numbers a new call the same (x86_64, aarch64, arm, riscv, ...), except those that add an offset
// (alpha, mips, ia64, x32's bit 30). The generator uses these only after checking that the
// target's own numbering is the common one (generate.cc, common_numbering).
const KnownNumber kNewer[] = {
    {"set_mempolicy_home_node", 450},
    {"cachestat", 451},
    {"fchmodat2", 452},
    {"map_shadow_stack", 453},
    {"futex_wake", 454},
    {"futex_wait", 455},
    {"futex_requeue", 456},
    {"statmount", 457},
    {"listmount", 458},
    {"lsm_get_self_attr", 459},
    {"lsm_set_self_attr", 460},
    {"lsm_list_modules", 461},
    {"mseal", 462},
    {"setxattrat", 463},
    {"getxattrat", 464},
    {"listxattrat", 465},
    {"removexattrat", 466},
    {"open_tree_attr", 467},
    {"file_getattr", 468},
    {"file_setattr", 469},
};

}  // namespace

std::span<const char* const> allowed() { return kAllowed; }
std::span<const char* const> killed() { return kKilled; }
std::span<const char* const> enosys() { return kEnosys; }
std::span<const ArgRule> arg_rules() { return kArgRules; }

uint64_t clone_namespace_flags() {
  // CLONE_NEWTIME shares its bit with the exit-signal byte of clone(2), where no valid signal
  // sets it; it is listed so that "any namespace flag" holds however the kernel reads the word.
  return CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |
         CLONE_NEWCGROUP | CLONE_NEWTIME;
}

unsigned clone_flags_arg() {
#if defined(__s390__) || defined(__s390x__)
  return 1;
#else
  return 0;
#endif
}

std::span<const KnownNumber> newer_syscalls() { return kNewer; }

}  // namespace kern::seccomp_rules
