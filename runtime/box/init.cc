// Box init: PID 1 inside the box, from the moment the root is built. Runs in the child only.
// It spawns the workload, forwards the signals a supervisor sends, reaps every process that is
// re-parented to it, and exits with the workload's status (128+N for a signal N, since PID 1
// cannot be killed by its own signals from inside its namespace). In the OCI mode it waits for
// `start` and then becomes the workload itself (LaunchPlan::init_becomes_workload).
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/blocked_signals.h"
#include "runtime/box/terminal.h"
#include "runtime/channel.h"
#include "runtime/box/child_args.h"
#include "runtime/exit_status.h"
#include "runtime/sys/proc_title.h"
#include "runtime/sys/resident.h"
#include "runtime/box/workload_stage.h"

namespace kern {
namespace {


// The last forwarded signal that arrived while box init waited to be released (OCI created
// state): the only time the signals are not blocked.
volatile sig_atomic_t g_last_signal = 0;

void noop_handler(int sig) { g_last_signal = sig; }

int workload_entry(void* args) { exec_workload(*static_cast<const ChildArgs*>(args)); }

// The fd box init keeps its channel on once it has closed everything else.
constexpr int kInitChannelFd = 3;

// The workload shares init's memory until its execve, as posix_spawn does (CLONE_VM|CLONE_VFORK):
// no page tables are copied and neither side takes copy-on-write faults, and init is suspended
// meanwhile, so nothing runs on that memory at the same time, and the stage the workload writes
// there is what it had reached when the spawn returns (workload_stage.h). Signal handlers are
// not shared (no CLONE_SIGHAND): the workload resets its own copy.
pid_t spawn_workload(const ChildArgs& a) {
  constexpr size_t kStack = 256 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) return -1;
  pid_t pid = ::clone(workload_entry, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      const_cast<ChildArgs*>(&a));
  int saved = errno;
  // Back here the workload has exec'd (or exited): its stack is no longer anyone's.
  ::munmap(stack, kStack);
  errno = saved;
  return pid;
}

// OCI created state: says `held` to the creator, then waits for the `start` verb to connect to
// the hold socket, and returns that connection, the channel from now on. A terminating signal
// that arrives meanwhile ends the container (its process never ran), as it would a runtime's
// init waiting at that point.
int wait_for_release(const ChildArgs& a) {
  send_held(a.channel_fd);
  ::close(a.channel_fd);
  sigset_t none;
  sigemptyset(&none);
  for (;;) {
    struct pollfd p = {a.hold_fd, POLLIN, 0};
    int r = ::ppoll(&p, 1, nullptr, &none);
    if (r < 0 && errno == EINTR) {
      int sig = g_last_signal;
      g_last_signal = 0;
      if (sig != 0 && sig != SIGWINCH && sig != SIGCONT && sig != SIGCHLD && sig != SIGURG) _exit(128 + sig);
      continue;
    }
    if (r < 0) _exit(125);
    int c = ::accept4(a.hold_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      _exit(125);
    }
    ::close(a.hold_fd);
    return c;
  }
}

// The OCI mode checks at create, as runtimes do, that the process can be found: an engine
// reports "not found" and "permission denied" by those words (podman's 127 and 126).
void check_executable(const ChildArgs& a) {
  int err = ENOENT;
  for (const auto& c : a.exec->candidates) {
    struct stat st;
    if (::stat(c.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && (st.st_mode & 0111)) return;
    err = EACCES;
  }
  const std::string& arg0 = a.exec->argv.empty() ? std::string() : a.exec->argv[0];
  std::string what = "exec: \"" + arg0 + "\": " +
                     (err == ENOENT ? std::string(arg0.find('/') == std::string::npos
                                                      ? "executable file not found in $PATH (no such file or directory)"
                                                      : "no such file or directory")
                                    : std::string("permission denied"));
  send_setup_failed(a.channel_fd, ErrorKind::workload, err, what.c_str(), "");
  _exit(err == ENOENT ? 127 : 126);
}

// The OCI mode's /dev/console: the terminal's slave bound over it. A root without /dev cannot
// have it, and the terminal works without it. The target is opened once, in the root's own /dev
// directory (itself not a symlink), without following a symlink, and must be a file or a
// character device; the bind goes from the slave's descriptor onto that descriptor. A
// /dev/console that the image (or a container sharing the mount) made a symlink would otherwise
// carry the terminal's bind onto the file it names (runc's CVE-2025-52565): that stops the
// create. Returns 0 or an errno, with `what` set.
int bind_console(int slave, const char** what) {
  *what = "open /dev";
  int dev = ::open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dev < 0) return errno == ENOENT ? 0 : errno;
  int made = ::openat(dev, "console", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (made >= 0) ::close(made);
  *what = "open /dev/console";
  int target = ::openat(dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  int err = errno;
  ::close(dev);
  if (target < 0) return err == ENOENT || err == EROFS ? 0 : err;
  struct stat st;
  *what = "/dev/console is not a file or a character device (a symlink?)";
  if (::fstat(target, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
    ::close(target);
    return ELOOP;
  }
  *what = "bind the terminal onto /dev/console";
  err = 0;
  int tree = static_cast<int>(::syscall(SYS_open_tree, slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
  if (tree < 0 || ::syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    err = errno;
  if (tree >= 0) ::close(tree);
  ::close(target);
  return err;
}

// Box init's own stdio: the root's /dev/null if it is the null device (character 1:3), else
// nothing. A /dev/null that is a symlink to a file bound into the box would give init (and
// through /proc/1/fd, the box) a writable descriptor of that file (crun's CVE-2026-88265).
int open_null_device() {
  int fd = ::open("/dev/null", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

void run_box_init(const ChildArgs& a) {
  // The kernel drops signals sent to a namespace's init while their handler is SIG_DFL, so each
  // forwarded signal gets a handler; all of them stay blocked and are taken with sigwaitinfo.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  struct sigaction sa {};
  sa.sa_handler = noop_handler;
  sigemptyset(&sa.sa_mask);
  for_each_forwarded_signal([&](int s) {
    sigaddset(&set, s);
    ::sigaction(s, &sa, nullptr);
  });
  ::sigprocmask(SIG_BLOCK, &set, nullptr);

  // Init is a copy of kern: its argument and environment areas hold kern's command line and
  // the caller's environment, which every process in the box could read in /proc/1.
  (void)sys::scrub_process_title(a.launch != nullptr ? a.launch->init_title.c_str() : "kern-init");

  // -t: the workload's terminal comes from the box's own devpts, made here after pivot_root.
  ChildArgs wa = a;
  volatile int stage = stage_setup;
  wa.stage = &stage;
  if (a.pty_sock >= 0) {
    BoxTerminal t = make_box_terminal(a.pty_sock, a.has_winsize ? &a.winsize : nullptr);
    if (t.slave < 0) {
      send_setup_failed(a.channel_fd, ErrorKind::setup, t.err, t.what, "-t");
      _exit(125);
    }
    ::close(a.pty_sock);
    wa.pty_slave = t.slave;
    if (a.launch != nullptr && a.launch->console_at_dev) {
      const char* what = "";
      if (int e = bind_console(t.slave, &what); e != 0) {
        send_setup_failed(a.channel_fd, ErrorKind::setup, e, what, "/dev/console");
        _exit(125);
      }
      // The creator's stdio are not the container's when it has a terminal: an engine waits for
      // create's output pipes to close (containerd's shim), so init must not hold them.
      for (int fd = 0; fd <= 2; ++fd) ::dup2(t.slave, fd);
    }
  }
  int channel = a.channel_fd;
  if (a.hold_fd >= 0) {
    // The channel's reader may be gone when the workload's status is sent (the OCI `start` verb
    // reads only up to exec_ok): a write to it must fail, not kill init. A kern box's launcher
    // reads until init exits, so its start pays nothing for this.
    ::signal(SIGPIPE, SIG_IGN);
    check_executable(a);
    channel = wa.channel_fd = wait_for_release(a);
  }
  // Box init is kern, never execs (but the OCI mode's, right below), and holds what the box's
  // processes were denied (every capability, no seccomp filter; as root, the host's). Dumpable,
  // only the kernel's rule that an opener hold every capability of the target kept
  // /proc/1/{mem,exe,fd,...} from the box's processes: a box given every capability had kern's
  // binary as /proc/1/exe. Non-dumpable, its mm being the host user namespace's, only
  // CAP_SYS_PTRACE there opens it; kern box is joined through init's first child from now on
  // (box_join.h). The workload shares this mm until its execve. Not earlier: the launcher writes
  // the id maps, an OCI container in its created state is joined through init, and /proc/PID of
  // a non-dumpable process is root's. The OCI mode's init execs the workload itself below: from
  // that execve kern is no longer in the process.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    send_setup_failed(channel, ErrorKind::setup, errno, "prctl PR_SET_DUMPABLE", "0");
    _exit(125);
  }
  if (a.launch != nullptr && a.launch->init_becomes_workload) {
    // The OCI mode: the process is pid 1 itself (launch_plan.h). The workload's own steps undo
    // init's signal handlers and mask; a failure before its execve is one message on the
    // channel, and the channel's close-on-exec end tells `start` that the execve happened.
    wa.stage = nullptr;
    exec_workload(wa);
  }
  pid_t workload = spawn_workload(wa);
  if (workload < 0) {
    send_setup_failed(channel, ErrorKind::setup, errno, "clone", "workload");
    _exit(125);
  }
  SpawnOutcome outcome = classify_spawn(stage);
  if (outcome == SpawnOutcome::started) {
    send_exec_ok(channel);
  } else if (outcome == SpawnOutcome::died_early) {
    int status = 0;
    while (::waitpid(workload, &status, 0) < 0 && errno == EINTR) {
    }
    send_setup_failed(channel, ErrorKind::setup, 0,
                      WIFSIGNALED(status) ? "the command was killed before its execve" : "the command ended before its execve",
                      WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "");
    _exit(125);
  }

  // Init was cloned with all of kern's descriptors (the box's cgroup directory, the O_PATH bind
  // sources, the started and report fds, the terminal). The workload, suspended until its
  // execve (CLONE_VFORK), has taken what it needs: init keeps /dev/null as stdio and its channel
  // (a pipe to kern, for the workload's status), nothing else. close_range is there since 5.9,
  // below what kern needs (workload_exec.cc uses it too).
  int devnull = open_null_device();
  for (int fd = 0; fd <= 2; ++fd) {
    if (devnull >= 0)
      ::dup2(devnull, fd);
    else
      ::close(fd);
  }
  int chan = channel;
  if (chan != kInitChannelFd) {
    chan = ::dup3(channel, kInitChannelFd, O_CLOEXEC) == kInitChannelFd ? kInitChannelFd : -1;
  }
  ::syscall(SYS_close_range, static_cast<unsigned>(kInitChannelFd + 1), ~0u, 0u);

  // A box still running after a moment: init drops the code pages it touched while it set the
  // box up (runtime/sys/resident.h); it needs a few of them from here on.
  bool dropped = false;
  const struct timespec drop_after {0, sys::kDropCodePagesAfterMs * 1000000L};
  for (;;) {
    siginfo_t info;
    int sig = dropped ? ::sigwaitinfo(&set, &info) : ::sigtimedwait(&set, &info, &drop_after);
    if (sig < 0) {
      if (errno == EAGAIN && !dropped) {
        sys::drop_code_pages();
        dropped = true;
      }
      continue;  // EINTR, or the drop's timeout
    }
    if (sig != SIGCHLD) {
      ::kill(workload, sig);
      continue;
    }
    for (;;) {
      int status = 0;
      pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p <= 0) break;
      if (p == workload) {
        // Init can only exit with a code; the raw status tells kern "killed by SIGINT" from
        // "exit(130)".
        send_workload_status(chan, status);
        _exit(exit_code_from_wait_status(status));
      }
    }
  }
}

}  // namespace kern
