// BoxHandle; see box_handle.h. Launcher side, except for the child branch right after clone3,
// which goes straight to child_main and never returns.
#include "runtime/box_handle.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "runtime/caps.h"
#include "runtime/channel.h"
#include "runtime/box/child_args.h"
#include "runtime/exit_status.h"
#include "runtime/netns_helper.h"
#include "runtime/pod_clone.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"
#include "runtime/userns.h"

namespace kern {
namespace {

Result<std::vector<int>> open_sources(const std::vector<std::string>& paths, std::vector<UniqueFd>& keep) {
  std::vector<int> fds;
  for (const auto& p : paths) {
    KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(AT_FDCWD, p, O_PATH));
    fds.push_back(fd.get());
    keep.push_back(std::move(fd));
  }
  return fds;
}

// A persistent vdisk's directory, made when missing and kept between boxes, maybe in a directory
// others may write to: only a real directory of this user, and the box gets the very directory
// that was checked (the descriptor the check was made on is what is bound; a name swapped for a
// symlink or another directory after the check changes nothing).
Result<UniqueFd> open_own_dir(const BindMount& b) {
  if (::mkdir(b.source.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + b.source + "\"");
  UniqueFd fd(::open(b.source.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
  auto not_ours = [&] {
    return fail(ErrorKind::setup, EPERM, "\"" + b.source + "\" (" + b.origin + ") is not a directory of this user");
  };
  if (!fd) {
    if (errno == ENOTDIR || errno == ELOOP) return not_ours();
    return fail_errno("open \"" + b.source + "\"");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return fail_errno("fstat \"" + b.source + "\"");
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) return not_ours();
  return fd;
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

// A box or OCI container with network and user namespaces of its own, none joined by path, and
// nothing that needs the network namespace before box init is let go (an --egress-allow relay
// or pasta joins it in before_release): the namespace is made beside the root by the helper
// (netns_helper.h) instead of inside clone3. The box's first process joins it before the first
// mount step that needs it (child_main.cc): before the OCI hooks that run ahead of pivot_root
// look at it, and before a created container waits for start.
bool netns_beside(const LaunchPlan& plan, const StartContext& ctx) {
  return netns_helper_supported() && (plan.clone_flags & CLONE_NEWNET) && (plan.clone_flags & CLONE_NEWUSER) &&
         !ctx.before_release && plan.join_ns.empty();
}

// Reaps the helper on every way out of start() (it ends by itself, quickly).
struct HelperReaper {
  NetnsHelper& h;
  ~HelperReaper() { netns_helper_finish(h); }
};

bool asks_for_caps(const Limits& l) {
  return l.memory_max || l.pids_max || l.cpus || !l.cpuset_cpus.empty() || !l.io_max.empty();
}

}  // namespace

struct BoxHandle::State {
  pid_t pid = 0;
  UniqueFd pidfd;
  UniqueFd chan_read;
  std::optional<ChannelReader> reader;
  UniqueFd pty_master;
  UniqueFd audit_listener;  // allowlist-audit: the workload's seccomp listener
  std::optional<BoxCgroup> cgroup;
  std::vector<std::string> ephemeral;  // per-box dirs made before clone (vdisk on a [[disk]])
  std::vector<SkippedStep> skipped;
  bool reaped = false;
  bool torn_down = false;
};

BoxHandle::BoxHandle(std::unique_ptr<State> s) : s_(std::move(s)) {}
BoxHandle::BoxHandle(BoxHandle&&) noexcept = default;
BoxHandle& BoxHandle::operator=(BoxHandle&&) noexcept = default;
BoxHandle::~BoxHandle() { teardown(); }

pid_t BoxHandle::pid() const { return s_->pid; }
int BoxHandle::pidfd() const { return s_->pidfd.get(); }
int BoxHandle::pty_master() const { return s_->pty_master ? s_->pty_master.get() : -1; }
UniqueFd BoxHandle::take_audit_listener() { return std::move(s_->audit_listener); }
const BoxCgroup* BoxHandle::cgroup() const { return s_->cgroup ? &*s_->cgroup : nullptr; }
const std::vector<SkippedStep>& BoxHandle::skipped() const { return s_->skipped; }

int BoxHandle::signal(int sig) const {
  if (!s_ || s_->reaped || !s_->pidfd) return ESRCH;
  return ::syscall(SYS_pidfd_send_signal, s_->pidfd.get(), sig, nullptr, 0) == 0 ? 0 : errno;
}

Result<BoxExit> BoxHandle::reap() {
  if (s_->reaped) return fail(ErrorKind::internal, ECHILD, "box init was reaped already");
  int status = 0;
  while (::waitpid(s_->pid, &status, 0) < 0) {
    if (errno != EINTR) return fail_errno("waitpid box init", ErrorKind::internal);
  }
  s_->reaped = true;
  BoxExit e;
  e.exit_code = exit_code_from_wait_status(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  // Box init wrote the workload's raw status before exiting; every write end is closed now.
  while (s_->reader) {
    auto m = s_->reader->poll_next();
    if (!m || !m->has_value()) break;
    if ((*m)->type == ChannelMsgType::workload_status && WIFSIGNALED((*m)->wait_status))
      e.signal = WTERMSIG((*m)->wait_status);
  }
  return e;
}

void BoxHandle::teardown() {
  if (!s_ || s_->torn_down) return;
  s_->torn_down = true;
  if (!s_->reaped && s_->pid > 0) {
    if (s_->pidfd) ::syscall(SYS_pidfd_send_signal, s_->pidfd.get(), SIGKILL, nullptr, 0);
    while (::waitpid(s_->pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    s_->reaped = true;
  }
  if (s_->cgroup) (void)s_->cgroup->remove();
  for (const auto& d : s_->ephemeral) (void)sys::remove_tree(AT_FDCWD, d);
  s_->ephemeral.clear();
}

void BoxHandle::release() {
  if (!s_) return;
  s_->torn_down = true;
  s_->reaped = true;
  s_->ephemeral.clear();
  s_->reader.reset();
  s_->chan_read.reset();
  s_->pidfd.reset();
}

Result<BoxHandle> BoxHandle::start(const LaunchPlan& plan, const StartContext& ctx) {
  auto st = std::make_unique<State>();
  // From here every way out goes through the handle's teardown (its destructor).
  BoxHandle h(std::move(st));
  State& s = *h.s_;

  // Everything the child will touch is opened or computed here, before clone.
  std::vector<UniqueFd> keep;
  std::vector<std::string> dev_paths;
  std::vector<int> bind_fds;
  for (const auto& b : plan.mounts.binds) {
    if (b.ephemeral) {
      if (::mkdir(b.source.c_str(), 0700) != 0) return fail_errno("mkdir \"" + b.source + "\"");
      s.ephemeral.push_back(b.source);
    }
    UniqueFd fd;
    if (b.create_missing) {
      KERN_TRY_ASSIGN(fd, open_own_dir(b));
    } else {
      KERN_TRY_ASSIGN(fd, sys::open_at(AT_FDCWD, b.source, O_PATH));
    }
    bind_fds.push_back(fd.get());
    keep.push_back(std::move(fd));
  }
  for (const auto& d : plan.mounts.devices) dev_paths.push_back(d.host_path);
  KERN_TRY_ASSIGN(std::vector<int> device_fds, open_sources(dev_paths, keep));
  KERN_TRY(check_device_identity(plan.mounts.devices, device_fds));

  if (plan.cgroup.policy == CgroupPolicy::none && asks_for_caps(plan.cgroup.limits))
    log::warning("KERN_NO_SCOPE is set: the requested memory, pids, cpu or io caps are not enforced");
  if (plan.cgroup.policy != CgroupPolicy::none) {
    KERN_TRY_ASSIGN(s.cgroup, BoxCgroup::create(plan.name, plan.cgroup.limits, plan.cgroup.policy, ctx.runtime_dir,
                                                      plan.cgroup.default_caps_warning));
  }

  ChildArgs args;
  args.exec = &plan.exec;
  args.plan = &plan.mounts.steps;
  args.mount_ctx = MountContext{ctx.scratch_dir, &bind_fds, &device_fds, plan.mounts.config};
  args.hostname = &plan.hostname;
  args.launch = &plan;
  args.hold_fd = ctx.hold_fd;
  args.loopback_up = plan.loopback_up;
  args.timing = ctx.timing;
  args.last_cap = read_last_cap();
  args.seccomp = plan.seccomp;
  args.seccomp_notify = plan.seccomp_notify;
  std::vector<std::string> argv_store = plan.exec.argv;  // stable storage for the char* arrays
  for (auto& a : argv_store) args.argv.push_back(a.data());
  args.argv.push_back(nullptr);
  std::string shell_store = plan.exec.script_shell;
  if (!shell_store.empty() && !argv_store.empty()) {
    args.script_argv = {shell_store.data(), nullptr};
    args.script_argv.insert(args.script_argv.end(), args.argv.begin() + 1, args.argv.end());
  }
  std::vector<std::string> env_store = plan.exec.env;
  for (auto& e : env_store) args.envp.push_back(e.data());
  args.envp.push_back(nullptr);
  std::vector<int> pass_tmp(plan.exec.pass_fds.size() + 2);
  args.pass_tmp = pass_tmp.data();

  // -t: box init makes the terminal in the box's own devpts and sends its master back here.
  UniqueFd term_sock, term_child;
  if (plan.tty) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair (-t)");
    term_sock.reset(sv[0]);
    term_child.reset(sv[1]);
    args.pty_sock = sv[1];
    if (ctx.winsize) {
      args.winsize = *ctx.winsize;
      args.has_winsize = true;
    }
  }

  UniqueFd audit_sock, audit_child;
  if (plan.seccomp_audit) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair (audit)");
    audit_sock.reset(sv[0]);
    audit_child.reset(sv[1]);
    args.audit_sock = sv[1];
  }

  // The helper's stack lives in this frame, and the reaper (declared after it, so destroyed
  // first) waits for the helper on every way out.
  NetnsHelper helper;
  HelperReaper reap_helper{helper};
  UniqueFd netns_sock, netns_child;
  unsigned long long clone_flags = plan.clone_flags;
  if (netns_beside(plan, ctx)) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno("socketpair (netns)");
    netns_sock.reset(sv[0]);
    netns_child.reset(sv[1]);
    args.netns_sock = sv[1];
    args.loopback_up = false;  // the helper brings it up
    clone_flags &= ~static_cast<unsigned long long>(CLONE_NEWNET);
  }

  UniqueFd sync_write, chan_write;
  KERN_TRY_ASSIGN(UniqueFd sync_read, sys::make_pipe(O_CLOEXEC, &sync_write));
  KERN_TRY_ASSIGN(s.chan_read, sys::make_pipe(O_CLOEXEC, &chan_write));
  args.sync_fd = sync_read.get();
  args.channel_fd = chan_write.get();
  args.mount_ctx.sync_fd = args.sync_fd;
  args.mount_ctx.channel_fd = args.channel_fd;
  mark(ctx.timing, Phase::prepared);

  int pidfd_raw = -1;
  int into = s.cgroup ? s.cgroup->dir_fd() : ctx.into_cgroup_fd;
  if (!ctx.join_cgroup_dirs.empty() && (clone_flags & CLONE_NEWCGROUP)) {
    clone_flags &= ~static_cast<unsigned long long>(CLONE_NEWCGROUP);
    args.unshare_cgroupns = true;
  }
  UniqueFd holder;
  if (plan.join_holder > 0) {
    KERN_TRY_ASSIGN(holder, open_pod_holder(plan.join_holder, plan.join_holder_start));
  }
  pid_t pid = holder ? clone_into_pod(holder.get(), plan.join_holder_ns, clone_flags, into, &pidfd_raw)
                     : clone_box(clone_flags, into, &pidfd_raw);
  if (pid == 0) child_main(args);
  if (pid < 0 && holder)
    return fail(Error(ErrorKind::setup, errno, "setns into the pod's namespaces, then clone3 (pid " +
                                                   std::to_string(plan.join_holder) + " holds them)"));
  if (pid < 0) return fail(clone_error(errno));
  s.pid = pid;
  s.pidfd.reset(pidfd_raw);
  mark(ctx.timing, Phase::cloned);
  sync_read.reset();
  chan_write.reset();
  term_child.reset();
  audit_child.reset();
  netns_child.reset();
  s.reader.emplace(s.chan_read.get());
  // Started at once: the namespace is made while the id maps are written and the root built.
  if (netns_sock) {
    helper.sock = netns_sock.get();
    helper.box_pidfd = s.pidfd.get();
    helper.loopback_up = plan.loopback_up;
    if (int e = netns_helper_start(helper); e != 0)
      return fail(Error(ErrorKind::setup, e, "clone (the box's network namespace helper)"));
  }

  if (plan.clone_flags & CLONE_NEWUSER) {
    auto r = plan.explicit_id_maps ? write_explicit_id_maps(pid, plan.uid_map, plan.gid_map)
                                   : write_id_maps(pid, ::getuid(), ::getgid(), plan.uid_range);
    if (!r) return fail(std::move(r).error().with_context("writing the box's id maps"));
  }
  mark(ctx.timing, Phase::idmapped);
  for (const auto& dir : ctx.join_cgroup_dirs)
    KERN_TRY(sys::write_knob(AT_FDCWD, dir + "/cgroup.procs", std::to_string(s.pid)));
  if (ctx.before_release) KERN_TRY(ctx.before_release(s.pidfd.get()));
  if (sys::write_all_raw(sync_write.get(), "G", 1) != 0) return fail(Error(ErrorKind::setup, errno, "signal the box to start"));
  if (!ctx.before_pivot) sync_write.reset();  // else kept for the byte that ends before_pivot
  if (netns_sock) {
    // Once the helper is gone, the box's end sees EOF if it sent nothing (a failed start).
    netns_helper_finish(helper);
    netns_sock.reset();
  }

  // Box init's word decides: exec_ok, or the failure, or nothing (it died without one).
  for (;;) {
    KERN_TRY_ASSIGN(std::optional<ChannelMsg> m, s.reader->next());
    if (!m) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      s.reaped = true;
      std::string how = WIFSIGNALED(status) ? std::string("killed by ") + strsignal(WTERMSIG(status))
                                            : "exit " + std::to_string(exit_code_from_wait_status(status));
      return fail(ErrorKind::setup, 0, "the box ended before its command started (" + how + ")");
    }
    if (m->type == ChannelMsgType::exec_ok) break;
    if (m->type == ChannelMsgType::held && ctx.hold_fd >= 0) break;
    if (m->type == ChannelMsgType::before_pivot && ctx.before_pivot && sync_write) {
      KERN_TRY(ctx.before_pivot(pid, s.pidfd.get()));
      if (sys::write_all_raw(sync_write.get(), "P", 1) != 0)
        return fail(Error(ErrorKind::setup, errno, "signal the box to enter its root"));
      sync_write.reset();
      continue;
    }
    if (m->type == ChannelMsgType::step_skipped) {
      s.skipped.push_back({m->step, m->err});
      continue;
    }
    if (m->type == ChannelMsgType::setup_failed) return fail(std::move(*m->error));
    return fail(ErrorKind::internal, EPROTO, "the box sent its workload's status before exec_ok");
  }
  mark(ctx.timing, Phase::confirmed);
  if (term_sock) {
    KERN_TRY_ASSIGN(s.pty_master, sys::recv_fd(term_sock.get(), "the box's terminal"));
  }
  if (audit_sock) {
    // Sent before the execve that exec_ok confirms: already queued, so never waited for.
    (void)::fcntl(audit_sock.get(), F_SETFL, O_NONBLOCK);
    KERN_TRY_ASSIGN(s.audit_listener, sys::recv_fd(audit_sock.get(), "the box's seccomp listener"));
  }
  return h;
}

}  // namespace kern
