// The cgroup v2 side of a container's resources, pure: what `kern oci update` writes for a
// runtime-spec LinuxResources document, and the stats document `kern oci events --stats` prints
// from the files it read. The verbs that read and write the files are in container_verbs.h.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// One write: `value` into the cgroup's file `file` ("memory.max").
struct CgroupWrite {
  std::string file;
  std::string value;
  bool operator==(const CgroupWrite&) const = default;
};

// What a LinuxResources document asks, as cgroup v2 writes in a fixed order (memory, cpu,
// cpuset, pids, io, hugetlb, unified last so that it wins, as the specification says), plus what
// cgroup v2 has no file for (memory.kernel, swappiness, disableOOMKiller), named in `ignored`
// for a warning. `current_cpu_max` is the cgroup's cpu.max now: a document that sets only the
// quota or only the period keeps the other. Refused: a swap limit below the memory limit or
// without one, realtime CPU time, devices, network and rdma (no cgroup v2 file; devices need a
// new BPF program), unified keys that are not a plain file name.
Result<std::vector<CgroupWrite>> resource_writes(const Resources& r, const std::string& current_cpu_max,
                                                 std::vector<std::string>* ignored);

// runc's stats document, {"type":"stats","id":ID,"data":{"cpu":...,"memory":...,"pids":...}},
// from the texts of the cgroup's files by name (cpu.stat, memory.current, memory.max,
// memory.peak, memory.stat, memory.swap.current, memory.swap.max, pids.current, pids.max, or
// their cgroup v1 counterparts, stats_files_v1); a file that is absent leaves its fields out.
std::string stats_document(const std::string& id, const std::map<std::string, std::string>& files);

// The files stats_document reads.
const std::vector<std::string>& stats_files();
// Those it reads on cgroup v1 (cpuacct.usage, cpuacct.stat, the v1 cpu.stat, memory.*_in_bytes,
// memory.failcnt, memory.stat, pids.*), each with the controller whose hierarchy has it.
const std::vector<std::pair<std::string, std::string>>& stats_files_v1();

}  // namespace kern::bundle
