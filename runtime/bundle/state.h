// An OCI container's life (creating -> created -> running -> stopped; running <-> paused while its
// cgroup is frozen) and its state documents:
// the record kern keeps under --root, and the specification's state JSON that `state` prints and
// hooks read on stdin. Pure; the pid's liveness is passed in, read by the caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "runtime/sys/error.h"

namespace kern::bundle {

enum class ContainerStatus { creating, created, running, stopped, paused };

const char* status_name(ContainerStatus s);

// What kern remembers of a container between verbs (state.json in its directory under --root).
struct ContainerRecord {
  std::string id;
  std::string bundle;             // absolute path
  pid_t pid = 0;                  // box init; 0 while creating
  uint64_t pid_start_time = 0;    // /proc/PID/stat field 22 when it was recorded
  bool started = false;           // `start` released the workload
  std::string created;            // RFC 3339, UTC
  std::string cgroup;             // the container's cgroup directory, "" = none
  // Its cgroup v1 directories (root on a v1 or hybrid host): hierarchy ("cpu,cpuacct") -> dir.
  std::map<std::string, std::string> cgroups_v1;
  std::map<std::string, std::string> annotations;
  // The inode number of the container's directory, stamped by StateDir::write: a record copied
  // into another entry (a copy of the tree, a backup put back beside the live one) names a
  // directory that is not its own, and its pid is not that entry's. 0: not stamped.
  uint64_t entry_ino = 0;
  // Whether start and delete need the config.json kept at create: start for startContainer or
  // poststart hooks or a seccomp listener, delete for poststop hooks. A record without them (an
  // older kern's) says yes: the document is read as it always was.
  bool start_needs_config = true;
  bool delete_needs_config = true;
};

// What the caller saw of the recorded pid just now: its start time, 0 when it is gone or a
// zombie (see sys::process_start_time).
struct PidObservation {
  uint64_t start_time = 0;
  bool frozen = false;  // the container's cgroup.events says "frozen 1"
};

// The status now. A pid that is gone, or whose start time differs (the pid was recycled), is
// stopped: the container's process is never confused with another one. A live container whose
// cgroup is frozen is paused.
ContainerStatus observe(const ContainerRecord& r, const PidObservation& seen);

// The verbs whose effect depends on the status; `allowed` says whether `verb` may act on a
// container in `s`, and the refusal names both.
enum class Verb { start, kill, pause, resume, exec, delete_, delete_force };
kern::Status allowed(Verb verb, const std::string& id, ContainerStatus s);

// The specification's state document: ociVersion, id, status, pid (when there is a process),
// bundle, annotations.
std::string state_json(const ContainerRecord& r, ContainerStatus s);

// The record as kern stores it, and back (a config error naming the member on a bad file).
std::string record_json(const ContainerRecord& r);
Result<ContainerRecord> parse_record(const std::string& text);

// Container ids name a directory under --root: letters, digits and "_+-." only, not "." or "..",
// at most 1024 bytes; anything else is refused.
kern::Status check_container_id(const std::string& id);

// Box init's title in /proc/PID/cmdline while the container is created, naming it (`ps` shows
// which container a waiting init is; from `start` the process is the workload's own).
std::string init_title(const std::string& id);
// Whether a cgroup.procs text (the record's cgroup, which box init was cloned into) lists `pid`:
// with the start time and the record's own directory (entry_ino), what binds a record to its
// process, so that a record holding another container's pid never acts on that container.
bool procs_list(const std::string& procs, pid_t pid);

// The time now in RFC 3339 with nanoseconds, UTC ("2026-12-01T12:00:00.123456789Z").
std::string rfc3339_now();

// The runtime-spec version kern implements (the state document's ociVersion).
inline constexpr const char* kOciVersion = "1.2.0";

}  // namespace kern::bundle
