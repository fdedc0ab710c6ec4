// An OCI container's cgroup: linux.cgroupsPath on cgroup v2 (through systemd's naming with
// --systemd-cgroup), linux.resources written into it, and what the kernel then says is in
// force. Runs in the process of `kern oci create` (and `update`, which rewrites resources).
//
// kern writes the cgroup file system itself; with --systemd-cgroup it only follows systemd's
// path convention ("SLICE:PREFIX:NAME" -> SLICE's path/PREFIX-NAME.scope), it does not ask
// systemd to create a unit. Where no cgroup v2 can be made (no cgroup2 mount, no write access,
// a controller the parent does not hand down) the container runs without the limits and the
// container's annotations say so, unless io.kern.require-limits is "true": then create fails.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

// Pure: cgroupsPath -> a path relative to the cgroup2 mount. `self` is this process's cgroup
// ("/a/b"). Absolute paths stay; a relative one is under `self`; an empty one is
// "/kern-oci/ID" for root and under `self` otherwise. With systemd, "SLICE:PREFIX:NAME"
// expands the slice ("a-b.slice" -> "/a.slice/a-b.slice") and names the scope PREFIX-NAME.scope.
Result<std::string> cgroup_relative_path(const std::string& cgroups_path, const std::string& id,
                                         const std::string& self, bool systemd, bool root);

// Pure: linux.resources -> cgroup v2 file name and value, in the order they are written.
// memory.swap is memory+swap in the specification and swap alone in cgroup v2; cpu.shares and
// blockIO weights are converted to cgroup v2's ranges as the OCI's cgroup v2 mapping says.
std::vector<std::pair<std::string, std::string>> resource_files(const Resources& r);

// The controllers those files need ("memory", "pids", "cpu", "cpuset", "io", "hugetlb").
std::vector<std::string> needed_controllers(const std::vector<std::pair<std::string, std::string>>& files);

struct ContainerCgroup {
  std::string dir;             // absolute; "" when the container runs without one
  UniqueFd fd;                 // O_DIRECTORY of dir, for clone3(CLONE_INTO_CGROUP)
  bool created = false;        // made by this create (delete removes it)
  std::map<std::string, std::string> enforced;  // file -> value read back, or "not enforced: why"
};

// Makes (or reuses, when it exists and is empty) the container's cgroup and writes the
// resources. require: any resource that cannot be put in force is an error.
Result<ContainerCgroup> make_container_cgroup(const Config& c, const std::string& id, bool systemd, bool require);

// Writes `r` into an existing cgroup directory (update); the enforced map as above.
Result<std::map<std::string, std::string>> write_resources(const std::string& dir, const Resources& r, bool require);

}  // namespace kern::bundle
