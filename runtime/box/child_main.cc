// The box's first process (PID 1 of the new pid namespace), from clone until it becomes box init.
// Runs in the child only. The steps, in order:
//   1. die with the launcher (PR_SET_PDEATHSIG), then wait for the parent's "id maps written";
//   2. build the root from the mount plan (pivot_root included);
//   3. hostname, loopback;
//   4. become init (init.cc).
// Any failing step becomes one message on the channel and _exit: nothing unwinds here.
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <span>
#include <string>

#include "runtime/channel.h"
#include "runtime/box/child_args.h"
#include "runtime/netns_helper.h"

namespace kern {
namespace {

[[noreturn]] void die(const ChildArgs& a, ErrorKind kind, int err, const char* what, const char* detail) {
  send_setup_failed(a.channel_fd, kind, err, what, detail);
  _exit(125);
}

void tell_skipped(void* cookie, const MountStep& step, int err) {
  const ChildArgs& a = *static_cast<const ChildArgs*>(cookie);
  std::string what = step_kind_name(step.kind) + " " + step.target;
  send_step_skipped(a.channel_fd, what.c_str(), err);
}

void run_plan(const ChildArgs& a, std::span<const MountStep> steps) {
  MountFailure f;
  if (!execute_mount_plan(steps, a.mount_ctx, real_mount_ops(), &f, tell_skipped, const_cast<ChildArgs*>(&a))) {
    std::string what = std::string(f.what) + " (" + step_kind_name(f.step->kind) + ")";
    die(a, ErrorKind::setup, f.err, what.c_str(), f.detail.empty() ? f.step->target.c_str() : f.detail.c_str());
  }
}

// Whether a mount step needs the box's own network namespace: sysfs (which only a process owning
// its network namespace may mount, and whose net/ entries are that namespace's), a /proc/sys
// write (a net.* knob is the namespace of the process that opens it: never the host's), and the
// OCI hooks run before pivot_root (a createRuntime hook configures /proc/PID/ns/net). An OCI
// mount whose type is not one known to be independent of it counts as needing it.
bool needs_box_netns(const MountStep& s, const ConfigRoot* config) {
  switch (s.kind) {
    case MountStepKind::sysfs:
    case MountStepKind::proc_write:
    case MountStepKind::sysctl:
    case MountStepKind::hooks_before_enter:
      return true;
    case MountStepKind::config_mount: {
      if (config == nullptr || s.index < 0 || static_cast<size_t>(s.index) >= config->mounts.size()) return true;
      const std::string& t = config->mounts[static_cast<size_t>(s.index)].type;
      return !(t.empty() || t == "bind" || t == "proc" || t == "tmpfs" || t == "devpts" || t == "mqueue");
    }
    default:
      return false;
  }
}

}  // namespace

void child_main(const ChildArgs& a) {
  const LaunchPlan* lp = a.launch;
  // The box must not outlive kern. PDEATHSIG covers a later death; the read below covers a
  // launcher that died before the prctl (its write end closes, the read sees EOF). An OCI
  // container outlives `kern oci create` by design: its engine owns it.
  if ((lp == nullptr || lp->die_with_parent) && ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    die(a, ErrorKind::setup, errno, "prctl PR_SET_PDEATHSIG", "");
  char go = 0;
  ssize_t n;
  do n = ::read(a.sync_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || go != 'G') _exit(125);  // the launcher is gone or gave up: nothing to report to
  // The mount plan's hooks_before_enter step may wait on it once more; closed once the root is built.
  mark(a.timing, Phase::child_go);
  if (a.unshare_cgroupns && ::unshare(CLONE_NEWCGROUP) != 0) die(a, ErrorKind::setup, errno, "unshare CLONE_NEWCGROUP", "");

  // An OCI user namespace whose maps do not map our host ids: the process is uid 0 of it only
  // once it says so (it holds every capability there), and files it makes need a mapped owner.
  if (lp != nullptr && lp->explicit_id_maps && (lp->clone_flags & CLONE_NEWUSER)) {
    auto maps_zero = [](const std::vector<IdMapLine>& m) {
      for (const auto& l : m)
        if (l.inside == 0) return true;
      return false;
    };
    if (maps_zero(lp->gid_map) && ::syscall(SYS_setresgid, 0, 0, 0) != 0) die(a, ErrorKind::setup, errno, "setresgid", "0");
    if (maps_zero(lp->uid_map) && ::syscall(SYS_setresuid, 0, 0, 0) != 0) die(a, ErrorKind::setup, errno, "setresuid", "0");
  }

  // Namespaces given by path (OCI linux.namespaces[].path): joined before the root is built.
  if (lp != nullptr) {
    for (const auto& [fd, type] : lp->join_ns) {
      if (::setns(fd, type) != 0) die(a, ErrorKind::setup, errno, "setns", "linux.namespaces[].path");
      ::close(fd);
    }
  }

  std::span<const MountStep> steps(*a.plan);
  // The steps before the first that needs the box's network namespace (needs_box_netns) run
  // while the helper makes it. The box joins it there, or at the end of the plan.
  size_t cut = steps.size();
  if (a.netns_sock >= 0) {
    for (size_t i = 0; i < steps.size(); ++i)
      if (needs_box_netns(steps[i], a.mount_ctx.config)) {
        cut = i;
        break;
      }
  }
  run_plan(a, steps.first(cut));
  if (a.netns_sock >= 0) {
    const char* what = "";
    int r = join_box_netns(a.netns_sock, &what);
    if (r != 0) die(a, ErrorKind::setup, r, what, "");
    ::close(a.netns_sock);
  }
  run_plan(a, steps.subspan(cut));
  ::close(a.sync_fd);
  mark(a.timing, Phase::mounted);

  // An OCI container without a hostname keeps the one it has (its uts namespace may be shared).
  const std::string& host = *a.hostname;
  if ((lp == nullptr || lp->sets_hostname) && ::sethostname(host.data(), host.size()) != 0)
    die(a, ErrorKind::setup, errno, "sethostname", host.c_str());
  if (lp != nullptr && !lp->domainname.empty() &&
      ::setdomainname(lp->domainname.data(), lp->domainname.size()) != 0)
    die(a, ErrorKind::setup, errno, "setdomainname", lp->domainname.c_str());
  if (a.loopback_up) {
    int r = bring_loopback_up();
    if (r != 0) die(a, ErrorKind::setup, r, "ioctl SIOCSIFFLAGS", "lo");
  }
  run_box_init(a);
}

}  // namespace kern
