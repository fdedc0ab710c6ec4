// An OCI container's cgroup: linux.cgroupsPath on cgroup v2 (through systemd's naming with
// --systemd-cgroup), linux.resources written into it, and what the kernel then says is in
// force. Runs in the process of `kern oci create` (and `update`, which rewrites resources).
//
// kern writes the cgroup file system itself; with --systemd-cgroup it only follows systemd's
// path convention ("SLICE:PREFIX:NAME" -> SLICE's path/PREFIX-NAME.scope), it does not ask
// systemd to create a unit. Run by the host's root where the controllers are bound to cgroup v1
// hierarchies (a v1 or hybrid boot), the resources go into a directory of every v1 hierarchy as
// with runc (v1.h), beside the cgroup v2 directory. A resource the configuration asks for
// that cannot be put in force (no cgroup, no write access, a controller neither version hands
// down) fails create, as with runc, unless io.kern.allow-uncapped is "true": then the container
// runs without it and its io.kern.enforcement annotation says so. io.kern.require-limits "true"
// also refuses a container that would run without any cgroup.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cgroup/v1.h"
#include "runtime/bundle/config.h"
#include "runtime/cgroup/enforcement.h"
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

// What the kernel says of one resource the configuration asked for (or of the cgroup itself):
// enforced, with the value read back (or where, or by what); or not_enforced, and why. The
// io.kern.enforcement annotation is rendered from these (knob_verdict_text).
struct KnobVerdict {
  Verdict verdict = Verdict::undetermined;
  std::string value;  // enforced: what the kernel reads back, the directory, the program
  std::string why;    // not_enforced: the reason
  static KnobVerdict held(std::string value) { return {Verdict::enforced, std::move(value), {}}; }
  static KnobVerdict lost(std::string why) { return {Verdict::not_enforced, {}, std::move(why)}; }
};

// The annotation's text of a verdict: the value, or "not enforced: WHY".
std::string knob_verdict_text(const KnobVerdict& v);

struct ContainerCgroup {
  std::string dir;             // absolute; "" when the container runs without one
  UniqueFd fd;                 // O_DIRECTORY of dir, for clone3(CLONE_INTO_CGROUP)
  bool created = false;        // made by this create (delete removes it)
  std::map<std::string, KnobVerdict> enforced;  // file (or "cgroup", "devices") -> its verdict
  V1Dirs v1;                       // the cgroup v1 directories (empty on a cgroup v2 host)
  std::vector<std::string> v1_made;  // those of them made by this create, deepest last
  std::vector<std::string> warnings;  // e.g. a cgroup that already has processes
};

inline constexpr const char* kAllowUncappedAnnotation = "io.kern.allow-uncapped";  // "true": run uncapped

// Makes (or reuses, when it exists and is empty) the container's cgroup and writes the
// resources. require: any resource that cannot be put in force is an error.
Result<ContainerCgroup> make_container_cgroup(const Config& c, const std::string& id, bool systemd, bool require);


}  // namespace kern::bundle
