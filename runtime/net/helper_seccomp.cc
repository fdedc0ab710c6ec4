// The egress helpers' hardening; see egress_helpers.h (harden_helper). Relay and proxy processes.
//
// The helpers' seccomp program is a short allowlist built here from syscall numbers: it has no
// argument rules, so it needs none of libseccomp's compilation that the box's programs get at
// build time (runtime/seccomp/). Unlisted calls answer ENOSYS; other architectures' ABIs are
// killed, as in the box.
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "runtime/net/egress_helpers.h"

namespace kern::net {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
#error "the egress helpers' seccomp filter knows x86_64 and aarch64 only"
#endif

// What the relay, the proxy and its connection processes call, getaddrinfo included (it reads
// /etc/hosts, resolv.conf and nsswitch.conf, may load an NSS module, and sends parallel queries).
constexpr long kAllowed[] = {
    SYS_read, SYS_write, SYS_close, SYS_exit, SYS_exit_group, SYS_rt_sigreturn, SYS_restart_syscall,
    SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_ppoll, SYS_accept4, SYS_sendmsg, SYS_recvmsg, SYS_socket,
    SYS_connect, SYS_getsockopt, SYS_setsockopt, SYS_getsockname, SYS_getpeername, SYS_shutdown, SYS_bind,
    SYS_sendto, SYS_recvfrom, SYS_sendmmsg, SYS_fcntl, SYS_clone, SYS_wait4, SYS_prctl, SYS_getpid,
    SYS_getppid, SYS_gettid, SYS_set_robust_list, SYS_openat, SYS_newfstatat, SYS_fstat, SYS_lseek,
    SYS_pread64, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_madvise, SYS_brk, SYS_futex, SYS_getrandom,
    SYS_clock_gettime, SYS_clock_nanosleep, SYS_uname, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
    SYS_faccessat, SYS_readlinkat, SYS_statx, SYS_ioctl, SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_pwait,
#if defined(__x86_64__)
    SYS_poll, SYS_open, SYS_stat, SYS_access, SYS_readlink, SYS_epoll_wait, SYS_arch_prctl,
#endif
#ifdef SYS_rseq
    SYS_rseq,
#endif
};

std::vector<sock_filter> build_program() {
  std::vector<sock_filter> p;
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
  // x32 numbers carry bit 30: killed, as every other ABI.
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  for (long nr : kAllowed) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 1));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
  return p;
}

}  // namespace

int harden_helper() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  // The relay holds a full set in the box's user namespace after setns; the proxy holds none in
  // kern's, but is cleared the same way. The bounding set goes first, while CAP_SETPCAP is held.
  for (int c = 0; c <= CAP_LAST_CAP; ++c) (void)::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
  (void)::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  std::memset(data, 0, sizeof data);
  if (::syscall(SYS_capset, &hdr, data) != 0) return errno;
  std::vector<sock_filter> prog = build_program();
  struct sock_fprog fprog = {static_cast<unsigned short>(prog.size()), prog.data()};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) return errno;
  return 0;
}

}  // namespace kern::net
