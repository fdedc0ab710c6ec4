// kill_container and delete_container (see container_ops.h).
#include "runtime/bundle/container_ops.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <csignal>

#include "runtime/bundle/live_container.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

namespace {

Status signal_cgroup(const std::string& cgroup, int sig) {
  if (sig == SIGKILL && ::access((cgroup + "/cgroup.kill").c_str(), W_OK) == 0)
    return sys::write_knob(AT_FDCWD, cgroup + "/cgroup.kill", "1");
  auto procs = sys::read_file(AT_FDCWD, cgroup + "/cgroup.procs");
  if (!procs) return fail(std::move(procs).error());
  size_t pos = 0;
  while (pos < procs->size()) {
    size_t end = procs->find('\n', pos);
    if (end == std::string::npos) end = procs->size();
    pid_t pid = static_cast<pid_t>(std::stol(procs->substr(pos, end - pos)));
    if (::kill(pid, sig) != 0 && errno != ESRCH) return fail_errno("kill " + std::to_string(pid));
    pos = end + 1;
  }
  return {};
}

// Waits up to `ms` for the pidfd to become readable (the process exited).
bool wait_exit(int pidfd, int ms) {
  struct pollfd p = {pidfd, POLLIN, 0};
  int rc;
  do rc = ::poll(&p, 1, ms);
  while (rc < 0 && errno == EINTR);
  return rc > 0;
}

// Kills what is still in the container's cgroup once its process is gone (children that outlived
// it, as where it had no pid namespace of its own) and waits up to `ms` for the cgroup to empty:
// rmdir refuses a cgroup with processes, and delete leaves none behind.
Status empty_cgroup(const std::string& cgroup, int ms) {
  for (int waited = 0;; waited += 10) {
    auto procs = sys::read_file(AT_FDCWD, cgroup + "/cgroup.procs");
    if (!procs) {
      if (procs.error().sys_errno() == ENOENT) return {};
      return fail(std::move(procs).error());
    }
    if (procs->find_first_not_of(" \n") == std::string::npos) return {};
    if (waited >= ms)
      return fail(ErrorKind::setup, ETIMEDOUT, "cgroup \"" + cgroup + "\" still has processes after SIGKILL");
    KERN_TRY(signal_cgroup(cgroup, SIGKILL));
    ::usleep(10 * 1000);
  }
}

Status remove_cgroup(const std::string& cgroup) {
  if (cgroup.empty()) return {};
  // Cgroups the container made below its own (a cgroup namespace with a writable cgroup mount
  // lets it) go first, deepest first, as runc removes them.
  if (DIR* d = ::opendir(cgroup.c_str())) {
    std::vector<std::string> subs;
    while (dirent* e = ::readdir(d))
      if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        subs.push_back(cgroup + "/" + e->d_name);
    ::closedir(d);
    for (const auto& sub : subs) KERN_TRY(remove_cgroup(sub));
  }
  KERN_TRY(empty_cgroup(cgroup, 5000));
  if (::rmdir(cgroup.c_str()) != 0 && errno != ENOENT) return fail_errno("rmdir \"" + cgroup + "\"");
  return {};
}

// Another entry that records r's cgroup directory: "container \"X\" records the same cgroup", or "".
std::string cgroup_recorded_elsewhere(const StateDir& dir, const ContainerRecord& r) {
  if (r.cgroup.empty()) return {};
  auto ids = dir.list();
  if (!ids) return {};
  for (const auto& other : *ids) {
    if (other == r.id) continue;
    auto o = dir.read(other);
    if (o && o->cgroup == r.cgroup) return "container \"" + other + "\" records the same cgroup \"" + r.cgroup + "\"";
  }
  return {};
}

}  // namespace

Status kill_container(const StateDir& dir, const std::string& id, int sig, bool all) {
  KERN_TRY_ASSIGN(LiveContainer c, open_container(dir, id));
  const ContainerRecord& r = c.record;
  const UniqueFd& pidfd = c.pidfd;
  if (!c.foreign.empty() && c.status == ContainerStatus::stopped)
    return fail(ErrorKind::config, 0, "cannot kill container \"" + id + "\": " + c.foreign);
  if (c.status == ContainerStatus::stopped) {
    // As runc: --all signals what is left in the cgroup (processes that outlived the container's
    // own where it had no pid namespace) and is done when nothing is; containerd kills every
    // exited task with --all before it deletes it. Without --all, runc's words ("container not
    // running"), which containerd's shim reads as "already done".
    if (!all) return fail(ErrorKind::config, 0, "cannot kill container \"" + id + "\": container not running");
    if (r.cgroup.empty() || ::access((r.cgroup + "/cgroup.procs").c_str(), F_OK) != 0) return {};
    if (!cgroup_recorded_elsewhere(dir, r).empty()) return {};  // not this container's to signal
    return signal_cgroup(r.cgroup, sig);
  }
  KERN_TRY(allowed(Verb::kill, id, c.status));
  if (all) {
    if (r.cgroup.empty())
      return fail(Error(ErrorKind::host_unsupported, 0, "kill --all: container \"" + id + "\" has no cgroup"));
    return signal_cgroup(r.cgroup, sig);
  }
  if (::syscall(SYS_pidfd_send_signal, pidfd.get(), sig, nullptr, 0) != 0)
    return fail_errno("pidfd_send_signal " + std::to_string(r.pid));
  return {};
}

Status delete_container(const StateDir& dir, const std::string& id, bool force, const ContainerRecord* known) {
  auto rec = known ? Result<ContainerRecord>(*known) : dir.read(id);
  if (!rec) {
    // runc: delete --force of a container that does not exist succeeds.
    if (force && rec.error().sys_errno() == ENOENT) return {};
    if (!force || !dir.exists(id)) return fail(std::move(rec).error());
    // A broken entry (no record, not a file, not a record, another's record): what it names is
    // not known to be the container's, so only the entry goes.
    log::warning(std::string(rec.error().what()) + "; removing the entry only (no process signalled, no cgroup removed)");
    return dir.remove(id);
  }
  const ContainerRecord& r = *rec;
  std::string foreign;
  KERN_TRY_ASSIGN(UniqueFd pidfd, open_recorded(r, &foreign));
  PidObservation seen;
  if (pidfd) seen = {r.pid_start_time, cgroup_frozen(r.cgroup)};
  KERN_TRY(allowed(force ? Verb::delete_force : Verb::delete_, id, observe(r, seen)));
  if (pidfd) {
    if (!r.cgroup.empty()) (void)signal_cgroup(r.cgroup, SIGKILL);
    ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    if (!wait_exit(pidfd.get(), 5000))
      return fail(ErrorKind::setup, ETIMEDOUT, "delete --force: container \"" + id + "\" did not die of SIGKILL");
  }
  // The recorded pid lives on as another's process, or another entry records the same cgroup:
  // the cgroup is not this container's to empty.
  std::string other = foreign.empty() ? cgroup_recorded_elsewhere(dir, r) : std::string();
  if (!foreign.empty() || !other.empty()) {
    log::warning("container \"" + id + "\": " + (foreign.empty() ? other : foreign) +
                 "; not signalled, its cgroup left alone, the entry removed");
    return dir.remove(id);
  }
  KERN_TRY(remove_cgroup(r.cgroup));
  for (const auto& [hierarchy, v1dir] : r.cgroups_v1) KERN_TRY(remove_cgroup(v1dir));
  return dir.remove(id);
}

}  // namespace kern::bundle
