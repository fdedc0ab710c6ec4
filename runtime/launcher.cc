// The launcher; see launcher.h. Parent only, except for the child branch right after clone3,
// which goes straight to child_main and never returns.
#include "runtime/launcher.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

#include "runtime/caps.h"
#include "runtime/cgroup.h"
#include "runtime/channel.h"
#include "runtime/child_args.h"
#include "runtime/registry.h"
#include "runtime/report.h"
#include "runtime/supervisor.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"
#include "runtime/userns.h"

namespace kern {
namespace {

constexpr int kSupervisedSignals[] = {SIGCHLD, SIGTERM, SIGINT,  SIGHUP,
                                      SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

std::vector<std::string> exec_candidates(const BoxSpec& spec) {
  const std::string& arg0 = spec.argv.at(0);
  if (arg0.find('/') != std::string::npos) return {arg0};
  std::string path = kDefaultBoxPath;
  for (const auto& kv : spec.env)
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find(':', pos);
    if (next == std::string::npos) next = path.size();
    std::string dir = path.substr(pos, next - pos);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + arg0);
    pos = next + 1;
  }
  return out;
}

Result<std::vector<int>> open_sources(const std::vector<std::string>& paths, std::vector<UniqueFd>& keep) {
  std::vector<int> fds;
  for (const auto& p : paths) {
    KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(AT_FDCWD, p, O_PATH));
    fds.push_back(fd.get());
    keep.push_back(std::move(fd));
  }
  return fds;
}

// A node swapped between the profile's check and this open is refused: the box gets exactly the
// device that was decided on, by identity.
Status check_device_identity(const std::vector<DeviceGrant>& grants, const std::vector<int>& fds) {
  for (size_t i = 0; i < grants.size(); ++i) {
    struct stat st;
    if (::fstat(fds[i], &st) != 0) return fail_errno("fstat \"" + grants[i].host_path + "\"");
    if (!S_ISCHR(st.st_mode) || (grants[i].rdev != 0 && st.st_rdev != grants[i].rdev))
      return fail(ErrorKind::setup, EPERM,
                  "device \"" + grants[i].host_path + "\" changed since it was checked (" + grants[i].origin + ")");
  }
  return {};
}

// Per-box directories on a [[disk]] backend (vdisk): created before clone, removed at teardown.
class EphemeralDirs {
 public:
  Status create(const std::string& path) {
    if (::mkdir(path.c_str(), 0700) != 0) return fail_errno("mkdir \"" + path + "\"");
    dirs_.push_back(path);
    return {};
  }
  ~EphemeralDirs() {
    for (const auto& d : dirs_) (void)sys::remove_tree(AT_FDCWD, d);
  }

 private:
  std::vector<std::string> dirs_;
};

// The caller's terminal in raw mode while a -t box runs; restored on every way out.
class RawTerminal {
 public:
  void enter() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    struct termios raw = saved_;
    ::cfmakeraw(&raw);
    if (::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0) active_ = true;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  struct termios saved_ {};
  bool active_ = false;
};

pid_t clone_box(unsigned long long flags, int cgroup_fd, int* pidfd) {
  struct clone_args args;
  std::memset(&args, 0, sizeof args);
  args.flags = flags | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(pidfd);
  args.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<uint64_t>(cgroup_fd);
  }
  return static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
}

Error clone_error(int err) {
  Error e(ErrorKind::host_unsupported, err, "clone3 into new namespaces");
  if (err == EPERM || err == EACCES)
    return std::move(e).with_hint(
        "unprivileged user namespaces look disabled: check /proc/sys/kernel/unprivileged_userns_clone "
        "and /proc/sys/kernel/apparmor_restrict_unprivileged_userns (kern doctor tells more)");
  if (err == ENOSPC || err == EUSERS)
    return std::move(e).with_hint("the user namespace limit is reached: /proc/sys/user/max_user_namespaces");
  return e;
}

}  // namespace

unsigned long long box_clone_flags(const BoxSpec& spec) {
  unsigned long long f = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC |
                         CLONE_NEWCGROUP;
  if (spec.net == NetMode::none) f |= CLONE_NEWNET;
  return f;
}

Result<int> run_box(const BoxSpec& spec, TimingPage* timing) {
  uint64_t t0 = monotonic_ns();
  KERN_TRY_ASSIGN(std::string runtime_dir, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRegistration reg, BoxRegistration::claim(runtime_dir, spec.name));

  // Everything the child will touch is opened or computed here, before clone.
  std::vector<UniqueFd> keep;
  EphemeralDirs ephemeral;
  std::vector<std::string> bind_paths, dev_paths;
  for (const auto& b : spec.binds) {
    if (b.ephemeral) KERN_TRY(ephemeral.create(b.source));
    bind_paths.push_back(b.source);
  }
  for (const auto& d : spec.devices) dev_paths.push_back(d.host_path);
  KERN_TRY_ASSIGN(std::vector<int> bind_fds, open_sources(bind_paths, keep));
  KERN_TRY_ASSIGN(std::vector<int> device_fds, open_sources(dev_paths, keep));
  KERN_TRY(check_device_identity(spec.devices, device_fds));

  std::optional<BoxCgroup> cgroup;
  if (spec.cgroup_policy == CgroupPolicy::none &&
      (spec.limits.memory_max || spec.limits.pids_max || spec.limits.cpus || !spec.limits.cpuset_cpus.empty() ||
       !spec.limits.io_max.empty()))
    log::warning("KERN_NO_SCOPE is set: the requested memory, pids, cpu or io caps are not enforced");
  if (spec.cgroup_policy != CgroupPolicy::none) {
    KERN_TRY_ASSIGN(cgroup, BoxCgroup::create(spec.name, spec.limits, spec.cgroup_policy, runtime_dir));
  }

  std::vector<MountStep> plan = build_mount_plan(spec);
  ChildArgs args;
  args.spec = &spec;
  args.plan = &plan;
  args.mount_ctx = MountContext{reg.scratch_dir(), &spec, &bind_fds, &device_fds};
  args.timing = timing;
  args.last_cap = read_last_cap();
  args.seccomp = seccomp_program(spec.seccomp);
  args.exec_candidates = exec_candidates(spec);
  std::vector<std::string> argv_store = spec.argv;  // stable storage for the char* arrays
  for (auto& a : argv_store) args.argv.push_back(a.data());
  args.argv.push_back(nullptr);
  std::vector<std::string> env_store = spec.env;
  for (auto& e : env_store) args.envp.push_back(e.data());
  args.envp.push_back(nullptr);

  // -t: box init makes the terminal in the box's own devpts and sends its master back here.
  UniqueFd term_sock, term_child, term_master;
  if (spec.tty) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair (-t)");
    term_sock.reset(sv[0]);
    term_child.reset(sv[1]);
    args.pty_sock = sv[1];
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &args.winsize) == 0) args.has_winsize = true;
  }

  UniqueFd sync_write, chan_write;
  KERN_TRY_ASSIGN(UniqueFd sync_read, sys::make_pipe(O_CLOEXEC, &sync_write));
  KERN_TRY_ASSIGN(UniqueFd chan_read, sys::make_pipe(O_CLOEXEC, &chan_write));
  args.sync_fd = sync_read.get();
  args.channel_fd = chan_write.get();

  // Signals are blocked before clone so that none sent during start-up is lost: the launcher
  // takes them from a signalfd, the child's init installs its own, the workload resets them.
  sigset_t set, old;
  sigemptyset(&set);
  for (int s : kSupervisedSignals) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, &old);
  // A caller that stops reading the started fd or the report fd must not kill kern.
  ::signal(SIGPIPE, SIG_IGN);
  UniqueFd sigfd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!sigfd) return fail_errno("signalfd");
  mark(timing, Phase::prepared);

  int pidfd_raw = -1;
  pid_t pid = clone_box(box_clone_flags(spec), cgroup ? cgroup->dir_fd() : -1, &pidfd_raw);
  if (pid == 0) child_main(args);
  if (pid < 0) return fail(clone_error(errno));
  UniqueFd pidfd(pidfd_raw);
  mark(timing, Phase::cloned);
  sync_read.reset();
  chan_write.reset();
  term_child.reset();

  auto abort_start = [&](Error e) -> Result<int> {
    ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    ::waitpid(pid, nullptr, 0);
    if (cgroup) (void)cgroup->remove();
    return fail(std::move(e));
  };

  if (auto r = write_id_maps(pid, ::getuid(), ::getgid(), spec.uid_range); !r)
    return abort_start(std::move(r).error().with_context("writing the box's id maps"));
  mark(timing, Phase::idmapped);
  if (sys::write_all_raw(sync_write.get(), "G", 1) != 0)
    return abort_start(Error(ErrorKind::setup, errno, "signal the box to start"));
  sync_write.reset();

  // End-of-file on the channel: the workload's execve succeeded (or the box died silently).
  if (auto r = read_child_reports(chan_read.get()); !r) {
    Error e = std::move(r).error();
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (cgroup) (void)cgroup->remove();
    return fail(std::move(e));
  }
  // End-of-file without a message also comes from a box that died before its workload reached
  // execve (killed, out of memory): the workload marks the page right before execve, so an
  // unmarked page means nothing was started and the caller gets no started byte.
  if (timing != nullptr && timing->ns[static_cast<int>(Phase::exec)] == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (cgroup) (void)cgroup->remove();
    return fail(ErrorKind::setup, 0,
                "the box ended before its command started (status " + std::to_string(status) + ")");
  }
  mark(timing, Phase::confirmed);
  if (term_sock) {
    auto m = sys::recv_fd(term_sock.get(), "the box's terminal");
    if (!m) return abort_start(std::move(m).error());
    term_master = std::move(*m);
    term_sock.reset();
  }

  BoxRecord rec;
  rec.name = spec.name;
  rec.launcher_pid = ::getpid();
  rec.launcher_start = sys::own_start_time();
  rec.init_pid = pid;
  rec.cgroup = cgroup ? cgroup->path() : "";
  rec.image = spec.image_ref;
  for (const auto& a : spec.argv) rec.command += (rec.command.empty() ? "" : " ") + a;
  rec.started_unix = ::time(nullptr);
  (void)reg.write(rec);

  // Without a per-box cgroup whatever was asked for is reported as not in force.
  Enforcement enf = cgroup ? cgroup->read_back(spec.limits) : uncapped_enforcement(spec.limits);
  if (spec.started_fd >= 0) {
    unsigned char bytes[2] = {0x01, started_memory_byte(enf)};
    (void)sys::write_all_raw(spec.started_fd, bytes, 2);
  }
  if (spec.report_fd >= 0 || spec.timing) {
    StartedInfo si{pid, enf, describe_id_map(::getuid(), spec.uid_range),
                   timing ? phase_durations(*timing) : std::vector<std::pair<std::string, double>>{}};
    if (spec.report_fd >= 0) write_report_line(spec.report_fd, started_record(spec, si));
    if (spec.timing) {
      std::string line = "timing:";
      for (const auto& [name, ms] : si.phases_ms) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " %s=%.3fms", name.c_str(), ms);
        line += buf;
      }
      log::note(line);
    }
  }

  if (cgroup) cgroup->reap_others();

  RawTerminal raw;
  if (term_master && spec.interactive) raw.enter();
  SuperviseInput sin{pidfd.get(), pid, spec.timeout_s, sigfd.get(), term_master ? term_master.get() : -1,
                     spec.interactive};
  auto sres = supervise(sin);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  if (!sres) {
    ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    ::waitpid(pid, nullptr, 0);
    if (cgroup) (void)cgroup->remove();
    return fail(std::move(sres).error());
  }

  ExitedInfo ei;
  ei.exit_code = sres->exit_code;
  ei.signal = sres->signal;
  if (ei.signal == 0 && timing != nullptr && timing->workload_status_set && WIFSIGNALED(timing->workload_status))
    ei.signal = WTERMSIG(timing->workload_status);
  ei.timed_out = sres->timed_out;
  // The kernel's counters are read only for the report fd, the one place that shows them.
  if (cgroup && spec.report_fd >= 0) ei.events = cgroup->events();
  ei.wall_ms = static_cast<double>(monotonic_ns() - t0) / 1e6;
  if (cgroup) (void)cgroup->remove();
  if (spec.report_fd >= 0) write_report_line(spec.report_fd, exited_record(spec, ei));
  // Entries of boxes whose launcher was SIGKILLed are reaped here, after this box is done, so
  // that the next start cleans up without paying for it before its own workload runs.
  reg.release();
  (void)list_boxes(runtime_dir, true);
  return sres->exit_code;
}

}  // namespace kern
