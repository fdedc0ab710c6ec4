// The verbs that act on a recorded container: kill and delete. Run in the process of the
// `kern oci` verb (on the host, outside the container). A pid is only ever signalled through a
// pidfd opened while its start time still matches the record, so a recycled pid is never hit.
#pragma once

#include <string>

#include "runtime/bundle/state_dir.h"

namespace kern::bundle {

// Sends `sig` to the container's process (created or running). `all`: to every process of its
// cgroup (cgroup.kill for SIGKILL), refused when it has none.
Status kill_container(const StateDir& dir, const std::string& id, int sig, bool all);

// Removes a stopped container: its cgroup (SIGKILL to whatever its process left in it first) and
// its state. `force`: kills it first (SIGKILL, and waits for it to be gone).
// `known`: the container's record as the caller has just read it (dir.read), else it is read here.
Status delete_container(const StateDir& dir, const std::string& id, bool force, const ContainerRecord* known = nullptr);

}  // namespace kern::bundle
