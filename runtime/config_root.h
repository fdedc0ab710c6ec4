// A root described by a configuration (an OCI config.json): its mounts in document order, the
// device nodes, readonly and masked paths, sysctls, the root's propagation and what else the
// config-root steps of a mount plan (mount_plan.h) name by index. Filled before clone by the OCI
// translator (runtime/bundle/oci_root_plan.cc); the one mount walker (runtime/box/mount_exec.cc) builds it
// in the box's first process through MountOps, as it builds a kern box's root.
//
// Container paths are resolved beneath the root (openat2 RESOLVE_IN_ROOT), so a symlink in the
// image can never point a mount outside it; missing mount points are made there.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kern {

struct MountStep;

// A mount's options as mount(2) and mount_setattr(2) take them.
struct MountOptions {
  unsigned long flags = 0;        // MS_* to set
  unsigned long propagation = 0;  // MS_PRIVATE / MS_SHARED / MS_SLAVE / MS_UNBINDABLE (| MS_REC), 0 = none
  bool bind = false;              // bind or rbind
  bool recursive_bind = false;    // rbind
  uint64_t attr_set = 0;          // MOUNT_ATTR_* set recursively (rro, rnosuid, ...)
  uint64_t attr_clr = 0;          // MOUNT_ATTR_* cleared recursively (rrw, rsuid, ...)
  bool idmap = false, recursive_idmap = false;
  bool tmpcopyup = false;         // a tmpfs that starts as a copy of what it covers
  std::string data;               // the rest, comma-joined, for the filesystem
};

struct ConfigMount {
  std::string destination;  // container path
  std::string type;         // "" for a bind
  std::string source;       // host path for a bind (made absolute against the bundle), else as given
  MountOptions options;
  // A bind's source as a detached copy of its mount tree (open_tree OPEN_TREE_CLONE) made by the
  // creating process before clone, or -1: the child attaches it, so a source the container's
  // user namespace cannot reach still binds (runc opens such sources early too).
  int source_fd = -1;
};

struct DeviceNode {
  std::string path;  // container path
  char type = 'c';   // c b u p
  unsigned major = 0, minor = 0;
  unsigned mode = 0666;
  uid_t uid = 0;
  gid_t gid = 0;
  bool bind_from_host = false;  // in a user namespace nodes cannot be made: the host's is bound
  // /dev/ptmx given in linux.devices: left to the link to pts/ptmx the walker makes (as runc
  // does), which is the container's own devpts; a bound host node would be the host's.
  bool keep_ptmx_link = false;
};

// One cgroup v1 hierarchy of the container (root on a v1 or hybrid host), for a "cgroup" mount.
struct CgroupV1Dir {
  std::string name;                      // the directory under the mount ("memory", "systemd")
  std::vector<std::string> controllers;  // "memory"; "name=systemd"
  std::string host_dir;                  // the container's directory of that hierarchy
  // Bound even where the container has a cgroup namespace of its own: the creator's own
  // directory of a container without cgroups (rootless), which a user namespace may not mount.
  bool bind = false;
};

struct ConfigRoot {
  std::string root_path;               // host path of root.path
  unsigned long root_propagation = 0;  // for "/" before anything (MS_REC | MS_PRIVATE/MS_SLAVE)
  unsigned long final_propagation = 0; // rootfsPropagation for the new "/" at the end, 0 = none
  std::vector<ConfigMount> mounts;     // by MountStep::index of config_mount steps
  std::vector<DeviceNode> devices;     // the defaults, then linux.devices (index + default_devices)
  size_t default_devices = 0;          // how many of `devices` are the defaults
  std::vector<std::string> readonly_paths, masked_paths;
  bool no_pivot = false;               // enter_root chroots (--no-pivot) instead of pivot_root
  std::vector<std::pair<std::string, std::string>> sysctl;  // /proc/sys path, value
  // The index in `mounts` of a read-only file system mounted at /dev (a tmpfs, as runc's
  // mounts.bats asks), or -1: mounted writable, so the devices and /dev/pts can be made in it,
  // and made read-only by the readonly_dev step once the root is built (as runc does).
  int readonly_dev = -1;
  int oom_score_adj = 0;               // for the oom_score_adj step
  // Filled by create once the container's cgroups exist. Non-empty: a "cgroup" mount is a tmpfs
  // with a directory per v1 hierarchy, as runc mounts it on such hosts: the hierarchy mounted
  // afresh where the container has a cgroup namespace of its own (its root is the container's
  // directory), else that directory bound.
  std::vector<CgroupV1Dir> cgroup_v1;
  bool own_cgroup_ns = false;
};

// Pure: one line per step, in order, as `kern oci plan` and `--plan` print them; a step that
// stands for several things (the default devices, the sysctls) has a line for each.
std::vector<std::string> describe_config_steps(const std::vector<MountStep>& steps, const ConfigRoot& r);

}  // namespace kern
