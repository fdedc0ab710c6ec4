// A recorded container as it is now: its record, a pidfd of its process (box init while it is
// created, the workload from `start`) when that process is still the one recorded, and its status (paused while its cgroup is frozen). Run in the process
// of a `kern oci` verb, on the host. Every verb that acts on a container's processes opens it
// here, so none of them ever acts on a recycled pid.
#pragma once

#include <string>

#include "runtime/bundle/state.h"
#include "runtime/bundle/state_dir.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

struct LiveContainer {
  ContainerRecord record;
  UniqueFd pidfd;  // its process; invalid when the container is stopped (or still creating)
  ContainerStatus status = ContainerStatus::stopped;
  std::string foreign;  // set when the recorded pid is alive but not this container's: why
};

// Whether the live process r.pid (of the recorded start time) is the container's: when a
// cgroup is recorded, that cgroup lists it (a record that is not its entry's own is refused
// when it is read: StateDir::read). `why` (may be null) says what differs.
bool own_process(const ContainerRecord& r, std::string* why);

// A pidfd of the recorded process, or an invalid fd when it is gone, its pid was reused, or it
// is not the container's own (then `foreign`, when given, says why).
Result<UniqueFd> open_recorded(const ContainerRecord& r, std::string* foreign = nullptr);

// The record of `id`, a pidfd of its init and its status; a config error when there is none.
Result<LiveContainer> open_container(const StateDir& dir, const std::string& id);

// Pure: whether a cgroup.events text says "frozen 1".
bool events_say_frozen(const std::string& events);
// Whether the cgroup directory's cgroup.events says it is frozen (false for "" or unreadable).
bool cgroup_frozen(const std::string& cgroup);

// Refuses, naming the verb and why, a container that has no cgroup (a host without a delegated
// cgroup v2 subtree runs containers without one).
Status require_cgroup(const ContainerRecord& r, const char* verb);

}  // namespace kern::bundle
