// The workload process: spawned by box init, sharing its memory until execve (init.cc), so
// it must leave init's state as it found it; ends in execve. Runs in the box only. Order matters:
//   signals reset -> new session (and controlling tty for -t) -> fds (all but the passed ones
//   closed) -> cwd (checked to be under the root) -> ids and capabilities -> no_new_privs +
//   seccomp (last, so that nothing before it needs a call the filter refuses) -> execve along the precomputed candidates (a script without "#!" through
//   the shell, as execvp does).
// A failure is one message on the channel (whose close-on-exec end is how the launcher learns
// that execve succeeded) and _exit.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "runtime/apparmor.h"
#include "runtime/box_cwd.h"
#include "runtime/caps.h"
#include "runtime/channel.h"
#include "runtime/box/child_args.h"
#include "runtime/sys/close_fds.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/box/workload_stage.h"

namespace kern {
namespace {

[[noreturn]] void fail_as(const ChildArgs& a, ErrorKind kind, int err, const char* what, const char* detail,
                          int code) {
  if (a.stage != nullptr) *a.stage = stage_failed;
  send_setup_failed(a.channel_fd, kind, err, what, detail);
  _exit(code);
}

[[noreturn]] void fail_setup(const ChildArgs& a, int err, const char* what, const char* detail) {
  fail_as(a, ErrorKind::setup, err, what, detail, 125);
}

// Only the dispositions kern changed are reset (box init's forwarding handlers, the launcher's
// ignored SIGPIPE): the rest are still the caller's defaults, and an exec resets handlers anyway.
void reset_signals() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT})
    ::sigaction(s, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Moves the pass-through fds to their box numbers and closes everything else above 2 but the
// channel (close-on-exec, for a failure before execve) and the audit socket, so that the workload
// inherits exactly stdio plus what was asked for, and nothing of kern's (a directory fd, the
// cgroup's, a bind source's) is open when it changes directory: a close-on-exec mark alone left
// them reachable through /proc/self/fd until the execve.
void arrange_fds(const ChildArgs& a) {
  const auto& pass = a.exec->pass_fds;
  int* tmp = a.pass_tmp;  // pass.size() + 2 slots, sized by the launcher
  size_t n = tmp != nullptr ? pass.size() : 0;
  // The temporary copies go above every source and target (not at a fixed high number, which
  // the common 1024 open-files limit would refuse with EINVAL).
  int base = 3;
  for (size_t i = 0; i < n; ++i) {
    if (pass[i].first >= base) base = pass[i].first + 1;
    if (pass[i].second >= base) base = pass[i].second + 1;
  }
  for (size_t i = 0; i < n; ++i) {
    tmp[i] = ::fcntl(pass[i].first, F_DUPFD_CLOEXEC, base);
    if (tmp[i] < 0) fail_setup(a, errno, "fcntl F_DUPFD", "pass fd");
  }
  for (size_t i = 0; i < n; ++i) {
    if (::dup2(tmp[i], pass[i].second) < 0) fail_setup(a, errno, "dup2", "pass fd");
  }
  int keep_few[2];
  int* keep = tmp != nullptr ? tmp : keep_few;
  for (size_t i = 0; i < n; ++i) keep[i] = pass[i].second;
  keep[n] = a.channel_fd;
  keep[n + 1] = a.audit_sock;
  int r = sys::close_fds_except_raw(keep, n + 2);
  if (r != 0) fail_setup(a, r, "close_range", "");
}

int chdir_or_create(const std::string& dir) {
  if (::chdir(dir.c_str()) == 0) return 0;
  if (errno != ENOENT) return errno;
  // As docker and podman do, a missing working directory is created.
  std::string partial;
  size_t pos = 1;
  while (pos <= dir.size()) {
    size_t next = dir.find('/', pos);
    if (next == std::string::npos) next = dir.size();
    partial = dir.substr(0, next);
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return errno;
    pos = next + 1;
  }
  return ::chdir(dir.c_str()) == 0 ? 0 : errno;
}

// The filter; with SCMP_ACT_NOTIFY rules (the OCI mode) its listener goes out on the channel
// for the caller to hand to the configured agent, and this process keeps no copy of it.
void load_filter(const ChildArgs& a, bool no_new_privs) {
  if (!a.seccomp_notify) {
    int r = install_seccomp_raw(a.seccomp, no_new_privs);
    if (r != 0) fail_setup(a, r, "seccomp SECCOMP_SET_MODE_FILTER", "");
    return;
  }
  int listener = -1;
  int r = install_seccomp_listener_raw(a.seccomp, &listener, no_new_privs);
  if (r != 0) fail_setup(a, r, "seccomp SECCOMP_SET_MODE_FILTER", "new listener");
  r = send_seccomp_listener(a.channel_fd, listener);
  ::close(listener);
  if (r != 0) fail_setup(a, r, "sendmsg", "the seccomp listener");
}

}  // namespace

void exec_workload(const ChildArgs& a) {
  mark(a.timing, Phase::forked);
  reset_signals();
  const ExecPlan& ex = *a.exec;

  if (::setsid() < 0) fail_setup(a, errno, "setsid", "");
  if (a.pty_slave >= 0) {
    if (::ioctl(a.pty_slave, TIOCSCTTY, 0) != 0) fail_setup(a, errno, "ioctl TIOCSCTTY", "");
    // The terminal kern made is the workload's own, as with runc and docker run -t: a process
    // of uid 1000 finds its tty owned by 1000 (the group stays devpts' tty group). A uid the
    // box's user namespace does not map leaves the owner as it is.
    struct stat st;
    if (::fstat(a.pty_slave, &st) == 0 && st.st_uid != ex.creds.uid)
      (void)::fchown(a.pty_slave, ex.creds.uid, static_cast<gid_t>(-1));
    // As with docker run -t, stdin is the terminal too; without -i the caller's input is
    // simply not relayed to it.
    for (int fd = 0; fd <= 2; ++fd)
      if (::dup2(a.pty_slave, fd) < 0) fail_setup(a, errno, "dup2", "pty");
  }
  arrange_fds(a);

  int r = chdir_or_create(ex.cwd);
  if (r != 0) fail_setup(a, r, "chdir", ex.cwd.c_str());
  // Whatever the path met on the way (a symlink in the image, a mount made by the box), the
  // directory reached must be under the box's root.
  r = cwd_inside_root_raw();
  if (r == EXDEV) fail_setup(a, 0, "cwd outside the root: refusing to run in", ex.cwd.c_str());
  if (r != 0) fail_setup(a, r, "getcwd after chdir", ex.cwd.c_str());

  for (const auto& l : ex.rlimits) {
    struct rlimit64 rl = {l.soft, l.hard};
    if (::syscall(SYS_prlimit64, 0, l.resource, &rl, nullptr) != 0) fail_setup(a, errno, "prlimit", l.name.c_str());
  }
  if (ex.umask >= 0) ::umask(static_cast<mode_t>(ex.umask));
  if (ex.nice) (void)::setpriority(PRIO_PROCESS, 0, *ex.nice);  // a refused lowering: warned before
  if (ex.personality >= 0 && ::syscall(SYS_personality, static_cast<unsigned long>(ex.personality)) < 0)
    fail_setup(a, errno, "personality", "linux.personality");

  // The seccomp stage (launch_plan.h): a filter without no_new_privs goes before the id switch.
  bool early_filter = a.seccomp.filter != nullptr && !ex.no_new_privs;
  if (early_filter) load_filter(a, false);
  r = apply_credentials_raw(ex.creds, a.last_cap);
  if (r != 0) fail_setup(a, r, "set ids and capabilities", "");

  // --apparmor: the profile takes effect at the execve below; before the filter, which need
  // not allow the open. A refusal here is the box not starting, never a box without it.
  if (!ex.apparmor_exec.empty()) {
    const char* file = "";
    r = enter_profile_on_exec_raw(ex.apparmor_exec, &file);
    if (r != 0) fail_setup(a, r, "write", file);
  }

  if (a.audit_sock >= 0) {
    // allowlist-audit: the launcher records (and lets run) what the allowlist would refuse,
    // through the filter's listener; sendmsg and close are on the allowlist.
    int listener = -1;
    r = install_seccomp_listener_raw(a.seccomp, &listener);
    if (r != 0) fail_setup(a, r, "seccomp SECCOMP_SET_MODE_FILTER", "new listener");
    r = sys::send_fd_raw(a.audit_sock, listener);
    ::close(listener);
    if (r != 0) fail_setup(a, r, "sendmsg", "the seccomp listener");
  } else if (!early_filter && (a.seccomp.filter != nullptr || ex.filter_required)) {
    load_filter(a, true);
  } else if (!early_filter && ex.no_new_privs && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fail_setup(a, errno, "prctl PR_SET_NO_NEW_PRIVS", "");
  }

  mark(a.timing, Phase::exec);
  if (a.stage != nullptr) *a.stage = stage_exec;
  int first_err = ENOENT;
  for (const auto& path : ex.candidates) {
    ::execve(path.c_str(), a.argv.data(), a.envp.data());
    if (errno == ENOEXEC && !a.script_argv.empty()) {
      // An executable file the kernel has no loader for: as execvp does, the shell reads it as
      // a script, and that is the answer whatever the shell's own execve says.
      a.script_argv[1] = const_cast<char*>(path.c_str());
      ::execve(a.script_argv[0], a.script_argv.data(), a.envp.data());
      first_err = ENOEXEC;
      break;
    }
    // ENOENT/ENOTDIR mean "try the next $PATH entry"; anything else (EACCES, ENOEXEC) is the
    // answer that decides 126 over 127, as a shell does.
    if (errno != ENOENT && errno != ENOTDIR && first_err == ENOENT) first_err = errno;
  }
  const char* name = ex.argv.empty() ? "" : ex.argv[0].c_str();
  fail_as(a, ErrorKind::workload, first_err, "execve", name, first_err == ENOENT ? 127 : 126);
}

}  // namespace kern
