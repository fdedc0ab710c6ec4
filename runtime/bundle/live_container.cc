// open_container and the frozen check (see live_container.h).
#include "runtime/bundle/live_container.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"

namespace kern::bundle {

bool own_process(const ContainerRecord& r, std::string* why) {
  if (r.cgroup.empty()) return true;
  auto procs = sys::read_file(AT_FDCWD, r.cgroup + "/cgroup.procs", 16 << 20);
  if (procs && procs_list(*procs, r.pid)) return true;
  if (why)
    *why = "process " + std::to_string(r.pid) + " is not in container \"" + r.id + "\"'s cgroup \"" +
           log::sanitize(r.cgroup) + "\"";
  return false;
}

Result<UniqueFd> open_recorded(const ContainerRecord& r, std::string* foreign) {
  if (r.pid <= 0) return UniqueFd();
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, r.pid, 0)));
  if (!fd) {
    if (errno == ESRCH) return UniqueFd();
    return fail_errno("pidfd_open " + std::to_string(r.pid));
  }
  // Checked after the pidfd is held: from here on the pidfd names this process or a dead one.
  if (sys::process_start_time(r.pid) != r.pid_start_time) return UniqueFd();
  if (!own_process(r, foreign)) return UniqueFd();
  return fd;
}

Result<LiveContainer> open_container(const StateDir& dir, const std::string& id) {
  LiveContainer c;
  KERN_TRY_ASSIGN(c.record, dir.read(id));
  KERN_TRY_ASSIGN(c.pidfd, open_recorded(c.record, &c.foreign));
  PidObservation seen;
  if (c.pidfd) seen = {c.record.pid_start_time, cgroup_frozen(c.record.cgroup)};
  c.status = observe(c.record, seen);
  return c;
}

bool events_say_frozen(const std::string& events) {
  std::istringstream in(events);
  std::string k, v;
  while (in >> k >> v)
    if (k == "frozen") return v == "1";
  return false;
}

bool cgroup_frozen(const std::string& cgroup) {
  if (cgroup.empty()) return false;
  auto text = sys::read_file(AT_FDCWD, cgroup + "/cgroup.events", 4096);
  return text && events_say_frozen(*text);
}

Status require_cgroup(const ContainerRecord& r, const char* verb) {
  if (!r.cgroup.empty()) return {};
  return fail(Error(ErrorKind::host_unsupported, 0,
                    std::string("kern oci ") + verb + ": container \"" + r.id +
                        "\" has no cgroup (it was created without a delegated cgroup v2 subtree)")
                  .with_hint("kern doctor says whether this host delegates cgroup v2 to this user"));
}

}  // namespace kern::bundle
