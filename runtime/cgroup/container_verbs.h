// The verbs that act on a container's cgroup v2 directory: pause and resume (cgroup.freeze),
// update (resource files) and events --stats. Run in the process of the `kern oci` verb, on the
// host. Each refuses clearly when the container has no cgroup.
#pragma once

#include <string>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/bundle/state_dir.h"

namespace kern::bundle {

// Freezes (pause) or thaws (resume) the container's cgroup and waits until cgroup.events says
// so. Refused unless the container is running or created (pause) or paused (resume).
Status set_frozen(const StateDir& dir, const std::string& id, bool freeze);

// Writes `r` into the container's cgroup (resource_writes). A file the cgroup does not have
// (its controller is not enabled there) is refused, naming the file, before anything is written;
// `ignored` gets the fields cgroup v2 has no file for.
Status update_container(const StateDir& dir, const std::string& id, const Resources& r,
                        std::vector<std::string>* ignored);

// runc's stats document for the container (stats_document).
Result<std::string> container_stats(const StateDir& dir, const std::string& id);

// How many times the kernel's OOM killer has killed in the container's cgroup: memory.events'
// oom_kill on cgroup v2, memory.oom_control's oom_kill on v1; 0 where neither can be read.
uint64_t container_oom_kills(const ContainerRecord& rec);

}  // namespace kern::bundle
