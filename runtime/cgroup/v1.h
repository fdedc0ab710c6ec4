// cgroup v1 for an OCI container that the host's root creates on a host whose controllers are
// bound to cgroup v1 hierarchies (a v1 or "hybrid" boot: /sys/fs/cgroup/memory, .../pids, ...
// beside an empty cgroup2 at /sys/fs/cgroup/unified). There runc and crun put the container in
// a directory of every v1 hierarchy and write its linux.resources into the v1 files; kern does
// the same, beside the cgroup v2 directory it keeps for freezing, killing and its device program.
//
// The pure half (parsing and the Resources -> v1 files mapping) is unit-tested; the rest runs in
// the process of `kern oci create`, `update` and `delete`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// One mounted v1 hierarchy: its controllers ("cpu,cpuacct", "name=systemd"), where it is
// mounted, and this process's cgroup in it ("/" or "/a/b", relative to the mount).
struct V1Hierarchy {
  std::vector<std::string> controllers;
  std::string mount;
  std::string self;
};

// Pure: the v1 hierarchies from /proc/self/mountinfo and /proc/self/cgroup texts. A hierarchy
// that /proc/self/cgroup names but nothing mounts here is left out.
std::vector<V1Hierarchy> v1_hierarchies(std::string_view mountinfo, std::string_view proc_cgroup);

// One write of a resource: `value` into the file `file` of the hierarchy holding `controller`.
struct V1Write {
  std::string controller;  // "memory", "cpu", "cpuset", "pids", "blkio", "hugetlb"
  std::string file;        // "memory.limit_in_bytes"
  std::string value;
  bool if_present = false;  // left out where the host has no such file (swap accounting off)
  bool operator==(const V1Write&) const = default;
};

// Pure: linux.resources as cgroup v1 writes, in the order they are made (runc's files and
// values). `ignored` gets what v1 kern leaves alone (memory.kernel and kernelTCP, deprecated and
// ignored by runc too). Refused: unified (v2 file names), network, rdma.
Result<std::vector<V1Write>> v1_resource_writes(const Resources& r, std::vector<std::string>* ignored);

// The container's directories, one per hierarchy, keyed by the hierarchy's controllers joined by
// ',' (the state record keeps them for update, exec and delete).
using V1Dirs = std::map<std::string, std::string>;

// Makes the container's directory in every hierarchy: `rel_for(self)` gives the path relative
// to a hierarchy's mount (from this process's cgroup in it). New cpuset directories get their
// parent's cpus and mems (a process cannot join an empty cpuset). *made: the directories made here,
// deepest last (delete and a failed create remove them).
Result<V1Dirs> make_v1_dirs(const std::vector<V1Hierarchy>& hs, const std::function<Result<std::string>(const std::string&)>& rel_for,
                            std::vector<std::string>* made);

// A V1Dirs key's controllers: "cpu,cpuacct" -> {"cpu", "cpuacct"}.
std::vector<std::string> hierarchy_controllers(const std::string& key);

// The directory of `dirs` whose hierarchy holds `controller`, or "".
std::string v1_dir_for(const V1Dirs& dirs, const std::string& controller);

// Writes `writes` into `dirs`. A write the kernel refuses with EINVAL is tried again after the
// others (memory above memory+swap, a quota for another period: the order an update needs
// depends on the values in force). Returns file -> value read back, or the error of the write.
std::map<std::string, Result<std::string>> apply_v1_writes(const V1Dirs& dirs, const std::vector<V1Write>& writes);

// exec --cgroup: where an exec'd process goes. Each spec is "PATH" (every hierarchy) or
// "CONTROLLER[,CONTROLLER...]:PATH" (those hierarchies; cgroup v1), PATH relative to the
// container's cgroup ("/" is the container's own). Pure: the container's cgroup v2 directory
// and v1 directories in, the directories to join out (*v2 and *v1 changed in place). Refused: a
// PATH that leaves the container's cgroup (".."), a controller no hierarchy of the container's
// has, a controller on a cgroup v2 only container.
Status sub_cgroups(const std::vector<std::string>& specs, std::string* v2, V1Dirs* v1);

// Moves process `pid` into every directory of `dirs` (cgroup.procs).
Status join_v1_dirs(const V1Dirs& dirs, pid_t pid);

}  // namespace kern::bundle
