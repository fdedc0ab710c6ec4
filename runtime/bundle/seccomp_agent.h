// The seccomp agent of the OCI runtime specification (linux.seccomp.listenerPath): the listener
// of a filter with SCMP_ACT_NOTIFY rules goes to the agent listening on that unix socket, with
// the container process state (JSON: ociVersion, fds ["seccompFd"], pid, metadata, state) in
// the same message. Run by `kern oci start` (and run) as the workload's frame arrives.
#pragma once

#include <sys/types.h>

#include <string>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// The process state document the agent gets. Pure.
std::string seccomp_agent_state(const Seccomp& s, pid_t pid, const std::string& container_state_json);

// Connects to s.listener_path and sends the document with `listener`. An agent that is not
// there is an error naming the path.
Status send_to_seccomp_agent(const Seccomp& s, pid_t pid, const std::string& container_state_json, int listener);

}  // namespace kern::bundle
