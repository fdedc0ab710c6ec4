// `kern oci ps`: a container's processes as host pids. With a cgroup they are its cgroup.procs;
// without one (hosts without a delegated cgroup v2 subtree), every process whose pid namespace
// is box init's, box init included. Host side, in the process of the verb; the filtering is pure.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "runtime/bundle/state_dir.h"

namespace kern::bundle {

// One process seen under /proc: its pid and the inode of its /proc/PID/ns/pid.
struct ProcNs {
  pid_t pid = 0;
  uint64_t pid_ns = 0;
};

// Pure: the pids (sorted) of the processes in pid namespace `ns`.
std::vector<pid_t> pids_in_namespace(const std::vector<ProcNs>& procs, uint64_t ns);

// Pure: the pids of a cgroup.procs text (sorted, no repeats); a line that is no pid is refused.
Result<std::vector<pid_t>> parse_cgroup_procs(const std::string& text);

// Pure: `ps` output with the header line and the lines whose PID column is one of `pids`.
// Refused when the header has no PID column (ps options that leave it out).
Result<std::string> filter_ps_output(const std::string& text, const std::set<pid_t>& pids);

// The container's processes; empty when it is stopped.
Result<std::vector<pid_t>> container_pids(const StateDir& dir, const std::string& id);

// Runs ps(1) with `options` (runc's default "-ef" when empty) and keeps the container's lines.
Result<std::string> ps_table(const std::vector<pid_t>& pids, const std::vector<std::string>& options);

}  // namespace kern::bundle
