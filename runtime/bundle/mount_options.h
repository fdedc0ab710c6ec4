// config.json mount options -> what mount(2) and mount_setattr(2) take. Pure; runs in the
// process that plans `kern oci create`.
//
// The options are the ones mount(8) and the OCI specification name: flags (ro, nosuid, ...),
// their negations, bind/rbind, propagation (private, rshared, ...), the recursive attributes of
// mount_setattr (rro, rnosuid, ...), idmap/ridmap, and tmpcopyup. Any other option is
// filesystem data ("mode=755", "size=64k"), passed on in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/bundle/config.h"

namespace kern::bundle {

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

MountOptions parse_mount_options(const std::vector<std::string>& options);

// The options parse_mount_options knows and create carries out (for the features document);
// idmap and ridmap are known but refused at create, and left out here.
std::vector<std::string> carried_out_mount_options();

// One step of an OCI container's root, in the order the child walks them.
enum class OciStepKind {
  root_propagation,  // "/" made rprivate/rslave/... (linux.rootfsPropagation, default rprivate)
  bind_root,         // root.path bound onto itself, so it is a mount point for pivot_root
  mount,             // config.json mounts[index], in document order
  device,            // linux.devices[index]: a node made (or bound from the host, rootless)
  pivot_root,        // into the root (or chroot with --no-pivot)
  readonly,          // linux.readonlyPaths[index]: bound onto itself read-only
  mask,              // linux.maskedPaths[index]: /dev/null or an empty read-only tmpfs over it
  root_readonly,     // root.readonly: the new / remounted read-only
};

struct OciMountStep {
  OciStepKind kind;
  std::string target;  // container path ("/" for the root steps)
  int index = -1;      // into mounts / devices / maskedPaths / readonlyPaths
};

// The steps that build the root of `c`, in order. The specification orders the mounts as the
// document lists them. Read-only and then masked paths come after pivot_root (resolved in the
// new root) and after every mount, so no mount can uncover them; a path in both ends masked.
std::vector<OciMountStep> plan_oci_mounts(const Config& c);
const char* oci_step_name(OciStepKind kind);

}  // namespace kern::bundle
