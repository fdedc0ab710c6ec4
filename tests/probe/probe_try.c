/* kern-probe tries: each attempts one call the box must refuse and returns what happened
 * (0 ok, errno, or minus the signal that killed a helper child). Every try is harmless where it
 * succeeds (outside a box, as any user, root included): mounts are made on a fresh temporary
 * directory and detached at once, namespaces are entered by a process that exits right after,
 * helper children die with the probe. The call under test is made by the probe process itself
 * wherever the box's answer is a kill, so `kern-probe try NAME` dies with SIGSYS (exit 159) in
 * a box. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#define X32_SYSCALL_BIT 0x40000000L

static int result_of(long r) { return r < 0 ? errno : 0; }

/* Runs fn in a child and returns its outcome: the child's exit code (0 or an errno), or minus
 * the signal that killed it. For calls that need a process state the probe itself may not have
 * (a session of its own). */
static int in_child(int (*fn)(void)) {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    _exit(fn() & 0xff);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return errno;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* A fresh directory to mount on; falls back to an existing one (the mount is detached at once). */
static const char *mount_target(char *buf, size_t len) {
  static const char *const dirs[] = {"/tmp", "/dev/shm", "/var/tmp", "/run"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; ++i) {
    snprintf(buf, len, "%s/kern-probe-mnt-XXXXXX", dirs[i]);
    if (mkdtemp(buf) != NULL) return buf;
  }
  snprintf(buf, len, "%s", access("/tmp", F_OK) == 0 ? "/tmp" : "/");
  return buf;
}

static int try_mount(const char *arg) {
  (void)arg;
  char buf[128];
  const char *target = mount_target(buf, sizeof buf);
  int made = strstr(target, "kern-probe-mnt-") != NULL;
  int r = result_of(mount("kern-probe", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k"));
  if (r == 0) umount2(target, MNT_DETACH);
  if (made) rmdir(target);
  return r;
}

/* A path that does not exist: the kernel looks it up first and answers ENOENT, privileged or
 * not; the filter kills before that. */
static int try_umount(const char *arg) {
  (void)arg;
  return result_of(umount2("/kern-probe-no-such-mount", 0));
}

static int try_unshare(const char *arg) {
  (void)arg;
  return result_of(unshare(CLONE_NEWUSER | CLONE_NEWNS));
}

/* A fork-like raw clone into new namespaces; the child exits at once. CLONE_NEWUSER makes it
 * possible for any user outside a box (the discriminant). */
static int try_clone_ns(const char *arg) {
  (void)arg;
  long r = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
  if (r == 0) _exit(0);
  if (r < 0) return errno;
  waitpid((pid_t)r, NULL, 0);
  return 0;
}

struct clone3_args {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static int try_clone3(const char *arg) {
  (void)arg;
  struct clone3_args a;
  memset(&a, 0, sizeof a);
  a.exit_signal = SIGCHLD;
  long r = syscall(SYS_clone3, &a, sizeof a);
  if (r == 0) _exit(0);
  if (r < 0) return errno;
  waitpid((pid_t)r, NULL, 0);
  return 0;
}

static int try_setns(const char *arg) {
  (void)arg;
  int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    note("setns: open /proc/self/ns/net: %s; trying an invalid fd", err_name(errno));
    return result_of(setns(-1, CLONE_NEWNET));
  }
  int r = result_of(setns(fd, CLONE_NEWNET));
  close(fd);
  return r;
}

static int try_bpf(const char *arg) {
  (void)arg;
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (fd < 0) return errno;
  close((int)fd);
  return 0;
}

/* Attach to a child of our own (allowed outside by every Yama level but 3). */
static int try_ptrace(const char *arg) {
  (void)arg;
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) return errno;
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* A parent killed (SIGSYS) before the prctl would leave this child paused for good. */
    if (getppid() != parent) _exit(0);
    for (;;) pause();
  }
  int r = result_of(ptrace(PTRACE_ATTACH, child, NULL, NULL));
  if (r == 0) {
    waitpid(child, NULL, 0);
    ptrace(PTRACE_DETACH, child, NULL, NULL);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  return r;
}

static int try_keyctl(const char *arg) {
  (void)arg;
  return result_of(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0));
}

static int try_io_uring(const char *arg) {
  (void)arg;
  unsigned char params[120]; /* struct io_uring_params */
  memset(params, 0, sizeof params);
  long fd = syscall(SYS_io_uring_setup, 1, params);
  if (fd < 0) return errno;
  close((int)fd);
  return 0;
}

static int try_perf(const char *arg) {
  (void)arg;
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) return errno;
  close((int)fd);
  return 0;
}

static int try_userfaultfd(const char *arg) {
  (void)arg;
  long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
  if (fd < 0) return errno;
  close((int)fd);
  return 0;
}

/* TIOCSTI on a fresh pty that is the controlling terminal of a new session: the one place it
 * works without privilege (when the kernel still allows it at all: dev.tty.legacy_tiocsti), so
 * outside a box this answers ok or EIO, and never touches the caller's terminal. Without a pty
 * it falls back to /dev/null, where the kernel answers ENOTTY and the filter EPERM. */
static int tiocsti_on_own_pty(void) {
  if (setsid() < 0) return errno;
  int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return 255;
  int unlock = 0, n = -1;
  if (ioctl(master, TIOCSPTLCK, &unlock) != 0 || ioctl(master, TIOCGPTN, &n) != 0) return 255;
  char path[64];
  snprintf(path, sizeof path, "/dev/pts/%d", n);
  int slave = open(path, O_RDWR | O_CLOEXEC); /* no O_NOCTTY: becomes our controlling tty */
  if (slave < 0) return 255;
  char c = '\n';
  return result_of(ioctl(slave, TIOCSTI, &c));
}

static int try_tiocsti(const char *arg) {
  (void)arg;
  int r = in_child(tiocsti_on_own_pty);
  if (r != 255) return r;
  note("tiocsti: no usable pty here; trying on /dev/null");
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  char c = '\n';
  r = result_of(ioctl(fd, TIOCSTI, &c));
  close(fd);
  return r;
}

/* /dev/null is no virtual console: ENOTTY from the kernel, EPERM from the filter. */
static int try_tioclinux(const char *arg) {
  (void)arg;
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  char sub = 0;
  int r = result_of(ioctl(fd, TIOCLINUX, &sub));
  close(fd);
  return r;
}

static int try_vsock(const char *arg) {
  (void)arg;
  int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

/* getpid through the i386 entry. Without i386 emulation the kernel answers with SIGSEGV. */
static int try_int80(const char *arg) {
  (void)arg;
#if defined(__x86_64__)
  long ret = 20; /* __NR_getpid on i386 */
  __asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
  if (ret < 0 && ret > -4096) return (int)-ret;
  return ret == getpid() ? 0 : EINVAL;
#else
  return ENOSYS;
#endif
}

/* getpid through the x32 ABI: the native number with bit 30 set. */
static int try_x32(const char *arg) {
  (void)arg;
#if defined(__x86_64__)
  return result_of(syscall(SYS_getpid | X32_SYSCALL_BIT));
#else
  return ENOSYS;
#endif
}

/* A system call number no kernel has (x86_64 and aarch64 end below 500). */
static int try_syscall1000(const char *arg) {
  (void)arg;
  return result_of(syscall(1000, 0xdeadbeef, 0xcafefeed, 0x1337));
}

static int try_write(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  static const char text[] = "kern-probe\n";
  int r = write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1) ? 0 : (errno ? errno : EIO);
  if (close(fd) != 0 && r == 0) r = errno;
  return r;
}

static int try_read(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buf[4096];
  int r = read(fd, buf, sizeof buf) < 0 ? errno : 0;
  close(fd);
  return r;
}

const struct try_entry probe_tries[] = {
    {"mount", try_mount, 0, "mount a tmpfs on a fresh directory"},
    {"umount", try_umount, 0, "umount2 a path that is not a mount point"},
    {"unshare", try_unshare, 0, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"},
    {"clone-ns", try_clone_ns, 0, "raw clone(CLONE_NEWUSER|CLONE_NEWNS|SIGCHLD)"},
    {"clone3", try_clone3, 0, "clone3 with no flags (fork-like)"},
    {"setns", try_setns, 0, "setns to /proc/self/ns/net"},
    {"bpf", try_bpf, 0, "bpf(BPF_MAP_CREATE) of a one-entry array"},
    {"ptrace", try_ptrace, 0, "PTRACE_ATTACH to a child of ours"},
    {"keyctl", try_keyctl, 0, "keyctl(KEYCTL_GET_KEYRING_ID, session)"},
    {"io_uring_setup", try_io_uring, 0, "io_uring_setup with one entry"},
    {"perf_event_open", try_perf, 0, "perf_event_open of a user-only software counter on self"},
    {"userfaultfd", try_userfaultfd, 0, "userfaultfd(UFFD_USER_MODE_ONLY)"},
    {"tiocsti", try_tiocsti, 0, "TIOCSTI on a fresh pty as controlling tty (fallback /dev/null)"},
    {"tioclinux", try_tioclinux, 0, "TIOCLINUX on /dev/null"},
    {"vsock", try_vsock, 0, "socket(AF_VSOCK, SOCK_STREAM)"},
    {"int80", try_int80, 0, "getpid through int $0x80 (i386)"},
    {"x32", try_x32, 0, "getpid through the x32 ABI"},
    {"syscall1000", try_syscall1000, 0, "system call number 1000, which no kernel has"},
    {"write", try_write, 1, "open PATH O_WRONLY|O_CREAT and write a line"},
    {"read", try_read, 1, "open PATH and read"},
    {NULL, NULL, 0, NULL},
};

const struct try_entry *find_try(const char *name) {
  for (const struct try_entry *t = probe_tries; t->name != NULL; ++t)
    if (strcmp(t->name, name) == 0) return t;
  return NULL;
}

void print_try(const char *name, int outcome) {
  if (outcome == 0)
    say(name, "ok");
  else if (outcome > 0)
    say(name, "%s", err_name(outcome));
  else
    say(name, "killed %s", sig_name(-outcome));
}
