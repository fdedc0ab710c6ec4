// An OCI container's root file system as mount steps: config.json's mounts in document order, the
// default and configured device nodes, pivot_root (or chroot with --no-pivot), sysctl,
// readonlyPaths and maskedPaths, root.readonly, rootfsPropagation, oomScoreAdj. Decided before
// clone (plan_oci_root, pure, in the process of `kern oci create`); the box's first process walks
// the steps with the one mount walker (runtime/box/mount_exec.h), whose ConfigRoot is `root`.
#pragma once

#include <string>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/bundle/mount_options.h"
#include "runtime/config_root.h"
#include "runtime/mount_plan.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

// The steps that build the root of `c`, one per document entry, in order. The specification
// orders the mounts as the document lists them. Read-only and then masked paths come after
// pivot_root (resolved in the new root) and after every mount, so no mount can uncover them; a
// path in both ends masked. plan_oci_root adds what the root needs around them.
std::vector<MountStep> plan_oci_mounts(const Config& c);

struct OciRootPlan {
  ConfigRoot root;
  std::vector<MountStep> steps;
};

// Pure: the root `c` describes, for a container whose bundle is `bundle_dir` and whose root is
// `root_path` (absolute). in_userns: the container has a user namespace of its own (device
// nodes are then bound from the host).
OciRootPlan plan_oci_root(const Config& c, const std::string& bundle_dir, const std::string& root_path,
                          bool in_userns, bool no_pivot);

// The create process, before the clone of a container with a user namespace of its own: clones
// the mount tree of each bind source of `r` (with the caller's own access: a directory only the
// host's root may enter, as runc's userns.bats binds) and sets its source_fd; the caller keeps
// the descriptors until the container is built. Where that cannot be done (a caller without
// CAP_SYS_ADMIN in its mount namespace: a rootless kern-oci, whose sources are its own anyway;
// a missing source) the mount keeps -1 and the child binds by path, reporting a failure by path.
std::vector<UniqueFd> open_bind_sources(ConfigRoot& r);

}  // namespace kern::bundle
