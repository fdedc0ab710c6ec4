// set_frozen, update_container, container_stats (see container_verbs.h).
#include "runtime/cgroup/container_verbs.h"

#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>

#include "runtime/cgroup/container_resources.h"
#include "runtime/cgroup/v1.h"
#include "runtime/bundle/live_container.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/fdio.h"

namespace kern::bundle {

namespace {

// A live container with a cgroup (stopped ones have nothing to act on).
Result<LiveContainer> open_with_cgroup(const StateDir& dir, const std::string& id, const char* verb) {
  KERN_TRY_ASSIGN(LiveContainer c, open_container(dir, id));
  if (!c.pidfd) return fail(ErrorKind::config, 0, std::string("kern oci ") + verb + ": container \"" + id + "\" is " +
                                                      status_name(c.status));
  KERN_TRY(require_cgroup(c.record, verb));
  return c;
}

// cgroup.events changes raise POLLPRI on it; waits until its "frozen" says `want`.
Status wait_frozen(const std::string& cgroup, bool want) {
  std::string path = cgroup + "/cgroup.events";
  KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    char buf[512];
    ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    if (n < 0) return fail_errno("read \"" + path + "\"");
    if (events_say_frozen(std::string(buf, static_cast<size_t>(n))) == want) return {};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return fail(ErrorKind::setup, ETIMEDOUT,
                  std::string("\"") + path + "\" did not say frozen " + (want ? "1" : "0") + " within 10 s");
    struct pollfd p = {fd.get(), POLLPRI, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100))) < 0 && errno != EINTR)
      return fail_errno("poll \"" + path + "\"");
  }
}

}  // namespace

Status set_frozen(const StateDir& dir, const std::string& id, bool freeze) {
  const char* verb = freeze ? "pause" : "resume";
  KERN_TRY_ASSIGN(LiveContainer c, open_container(dir, id));
  KERN_TRY(allowed(freeze ? Verb::pause : Verb::resume, id, c.status));
  KERN_TRY(require_cgroup(c.record, verb));
  KERN_TRY(sys::write_knob(AT_FDCWD, c.record.cgroup + "/cgroup.freeze", freeze ? "1" : "0"));
  return wait_frozen(c.record.cgroup, freeze);
}

namespace {

// update on a v1 or hybrid host: the container's cgroup v1 files (v1.h).
Status update_v1(const ContainerRecord& rec, const Resources& r, std::vector<std::string>* ignored) {
  if (!r.devices.empty())
    return fail(ErrorKind::config, 0, "resources.devices: kern oci update does not change a container's device rules");
  KERN_TRY_ASSIGN(std::vector<V1Write> writes, v1_resource_writes(r, ignored));
  for (const auto& w : writes)
    if (v1_dir_for(rec.cgroups_v1, w.controller).empty())
      return fail(Error(ErrorKind::host_unsupported, 0,
                        "kern oci update: " + w.file + ": the container has no cgroup v1 " + w.controller + " directory")
                      .with_hint("no " + w.controller + " hierarchy was mounted when it was created"));
  auto applied = apply_v1_writes(rec.cgroups_v1, writes);
  for (const auto& w : writes)
    if (auto& res = applied.at(w.file); !res)
      return fail(std::move(res).error().with_context("kern oci update " + w.file + " \"" + w.value + "\""));
  return {};
}

}  // namespace

Status update_container(const StateDir& dir, const std::string& id, const Resources& r,
                        std::vector<std::string>* ignored) {
  KERN_TRY_ASSIGN(LiveContainer c, open_with_cgroup(dir, id, "update"));
  if (!c.record.cgroups_v1.empty()) return update_v1(c.record, r, ignored);
  const std::string& cg = c.record.cgroup;
  std::string cpu_max;
  if (auto t = sys::read_file(AT_FDCWD, cg + "/cpu.max", 4096)) cpu_max = *t;
  KERN_TRY_ASSIGN(std::vector<CgroupWrite> writes, resource_writes(r, cpu_max, ignored));
  for (const auto& w : writes)
    if (::access((cg + "/" + w.file).c_str(), F_OK) != 0)
      return fail(Error(ErrorKind::host_unsupported, errno,
                        "kern oci update: \"" + cg + "/" + w.file + "\" does not exist")
                      .with_hint("its controller is not enabled in the container's cgroup"));
  for (const auto& w : writes) KERN_TRY(sys::write_knob(AT_FDCWD, cg + "/" + w.file, w.value));
  return {};
}

Result<std::string> container_stats(const StateDir& dir, const std::string& id) {
  KERN_TRY_ASSIGN(LiveContainer c, open_with_cgroup(dir, id, "events"));
  std::map<std::string, std::string> files;
  for (const auto& [ctl, name] : stats_files_v1()) {
    std::string d = v1_dir_for(c.record.cgroups_v1, ctl);
    if (d.empty()) continue;
    if (auto t = sys::read_file(AT_FDCWD, d + "/" + name)) files[name] = std::move(*t);
  }
  for (const auto& name : stats_files()) {
    if (files.count(name)) continue;  // cgroup v1's cpu.stat, not the v2 one beside it
    auto t = sys::read_file(AT_FDCWD, c.record.cgroup + "/" + name);
    if (t) files[name] = std::move(*t);
  }
  return stats_document(id, files);
}

uint64_t container_oom_kills(const ContainerRecord& rec) {
  std::string v1 = v1_dir_for(rec.cgroups_v1, "memory");
  std::string file = !v1.empty() ? v1 + "/memory.oom_control" : rec.cgroup.empty() ? "" : rec.cgroup + "/memory.events";
  if (file.empty()) return 0;
  auto text = sys::read_file(AT_FDCWD, file, 4096);
  if (!text) return 0;
  std::istringstream in(*text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v)
    if (k == "oom_kill") return v;
  return 0;
}

}  // namespace kern::bundle
