// An OCI container's root file system, as the box's first process builds it: config.json's
// mounts in document order, the default and configured device nodes, pivot_root (or chroot with
// --no-pivot), readonlyPaths and maskedPaths, root.readonly, rootfsPropagation, then sysctl and
// oomScoreAdj. Everything is decided before clone (plan_oci_root, pure, in the process of
// `kern oci create`); build_oci_root walks it in the child (a RootBuilder, launch_plan.h).
//
// Container paths are resolved beneath the root with openat2(RESOLVE_IN_ROOT), so a symlink in
// the image can never point a mount outside it; missing mount points are created there.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/launch_plan.h"
#include "runtime/bundle/mount_options.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

struct OciMount {
  std::string destination;  // container path
  std::string type;         // "" for a bind
  std::string source;       // host path for a bind (made absolute against the bundle), else as given
  MountOptions options;
  // A bind's source as a detached copy of its mount tree (open_tree OPEN_TREE_CLONE) made by the
  // create process (open_bind_sources), or -1: the child attaches it, so a source the
  // container's user namespace cannot reach still binds (runc opens such sources early too).
  int source_fd = -1;
};

struct OciDevice {
  std::string path;  // container path
  char type = 'c';   // c b u p
  unsigned major = 0, minor = 0;
  unsigned mode = 0666;
  uid_t uid = 0;
  gid_t gid = 0;
  bool bind_from_host = false;  // in a user namespace nodes cannot be made: the host's is bound
  // /dev/ptmx given in linux.devices: left to the link to pts/ptmx kern makes (as runc does),
  // which is the container's own devpts; a bound host node would be the host's, owned by nobody.
  bool keep_ptmx_link = false;
};

// One cgroup v1 hierarchy of the container (root on a v1 or hybrid host), for a "cgroup" mount.
struct OciCgroupV1 {
  std::string name;                      // the directory under the mount ("memory", "systemd")
  std::vector<std::string> controllers;  // "memory"; "name=systemd"
  std::string host_dir;                  // the container's directory of that hierarchy
  // Bound even where the container has a cgroup namespace of its own: the creator's own
  // directory of a container without cgroups (rootless), which a user namespace may not mount.
  bool bind = false;
};

struct OciRoot {
  std::string root_path;     // host path of root.path
  unsigned long root_propagation = 0;  // for "/" before anything (MS_REC | MS_PRIVATE/MS_SLAVE)
  unsigned long final_propagation = 0; // rootfsPropagation for the new "/" at the end, 0 = none
  std::vector<OciMountStep> steps;
  std::vector<OciMount> mounts;        // by OciMountStep::index
  std::vector<OciDevice> devices;      // the defaults, then linux.devices (by index + defaults)
  size_t default_devices = 0;          // how many of `devices` are the defaults
  std::vector<std::string> readonly_paths, masked_paths;
  bool no_pivot = false;
  std::vector<std::pair<std::string, std::string>> sysctl;  // /proc/sys path, value
  // The index in `mounts` of a read-only file system mounted at /dev (a tmpfs, as runc's
  // mounts.bats asks), or -1: mounted writable, so the devices and /dev/pts can be made in it,
  // and made read-only once the root is built (as runc does).
  int readonly_dev = -1;
  bool has_oom_score_adj = false;
  int oom_score_adj = 0;
  // prestart, createRuntime or createContainer hooks: the launcher runs them once the root is
  // mounted and before it is entered (pivot_root), as the specification and runc do, so a hook
  // still finds the bundle's host paths in the container's mount namespace.
  bool pause_before_pivot = false;
  // Filled by create once the container's cgroups exist. Non-empty: a "cgroup" mount is a tmpfs
  // with a directory per v1 hierarchy, as runc mounts it on such hosts: the hierarchy mounted
  // afresh where the container has a cgroup namespace of its own (its root is the container's
  // directory), else that directory bound.
  std::vector<OciCgroupV1> cgroup_v1;
  bool own_cgroup_ns = false;
};

// Pure: the root `c` describes, for a container whose bundle is `bundle_dir` and whose root is
// `root_path` (absolute). in_userns: the container has a user namespace of its own (device
// nodes are then bound from the host).
OciRoot plan_oci_root(const Config& c, const std::string& bundle_dir, const std::string& root_path,
                      bool in_userns, bool no_pivot);

// The create process, before the clone of a container with a user namespace of its own: clones
// the mount tree of each bind source of `r` (with
// the caller's own access: a directory only the host's root may enter, as runc's userns.bats
// binds) and sets its source_fd; the caller keeps the descriptors until the container is
// built. Where that cannot be done (a caller without CAP_SYS_ADMIN in its mount namespace: a
// rootless kern-oci, whose sources are its own anyway; a missing source) the mount keeps -1 and
// the child binds by path, reporting a failure by path.
std::vector<UniqueFd> open_bind_sources(OciRoot& r);

// Pure: one line per step build_oci_root takes, in its order (`kern oci plan`).
std::vector<std::string> describe_oci_root(const OciRoot& r);

// The child's side (a RootBuilder): `cookie` is the OciRoot. 0, or the errno with what failed
// and the path.
int build_oci_root(const void* cookie, const RootBuildLink& link, const char** what, std::string* detail);

}  // namespace kern::bundle
