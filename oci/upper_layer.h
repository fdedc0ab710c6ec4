// What a box wrote, read from its overlay's upper directory: the changes against the image
// (kern diff), and the same changes as an image layer (kern commit, each RUN of kern build).
// Any process, before clone; the box must not be writing (it has exited, or is paused).
//
// overlayfs marks a deleted lower entry with a 0/0 character device and a directory that hides
// its lower contents with an "overlay.opaque" xattr (user.* when mounted with userxattr, as
// kern's rootless boxes are; trusted.* otherwise); these become the image spec's whiteouts.
// Directories overlay copied up only to hold a mount point kern made (a `stub`: /proc, /dev,
// /etc/hosts in an image without them), and such stubs themselves, are left out, as are copied-
// up directories that end up holding no change. Files owned by the box's user (`host_uid`,
// root in a single-id box) are written as 0:0.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "oci/layer_tar.h"
#include "runtime/sys/error.h"

namespace kern::oci {

// The owners and mode bits of the image's files that its tree could not hold (the tree's owners
// file, tree_writer.h): a file the box changed keeps them in the layer, as overlayfs keeps a
// copied-up file's owner, where the box saw it as the user's own.
struct LowerOwner {
  uint32_t uid = 0, gid = 0;
  mode_t mode = 0;
};
using LowerOwners = std::map<std::string, LowerOwner>;  // "srv/conf" -> owner
// Reads a tree's owners file; a missing file is no records.
Result<LowerOwners> read_lower_owners(const std::string& owners_path);

struct UpperSource {
  int upper_fd = -1;                 // the upper directory (O_DIRECTORY)
  int lower_fd = -1;                 // the image's flattened tree; -1: none (FROM scratch)
  std::vector<std::string> stubs;    // relative paths ("proc", "etc/hosts")
  uid_t host_uid = 0;
  gid_t host_gid = 0;
  const LowerOwners* lower_owners = nullptr;
};

struct UpperChange {
  char kind = 'C';   // 'A' added, 'C' changed, 'D' deleted
  std::string path;  // "/etc/passwd"
};

// Sorted by path, as `docker diff` prints them.
Result<std::vector<UpperChange>> upper_changes(const UpperSource& src);

struct UpperLayerStats {
  size_t entries = 0, skipped_special = 0;
};
// Writes the changes to `tar` (in path order, directories before their contents).
Result<UpperLayerStats> write_upper_layer(const UpperSource& src, LayerTar& tar);

// The mount points a box makes in its root that a layer must not keep when the image lacks them.
const std::vector<std::string>& box_mount_stubs();

}  // namespace kern::oci
