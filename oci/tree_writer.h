// Writes the layers of one image, bottom first, into one flattened directory tree: the
// security-critical half of the unpacker (the archive half is layer_unpack.cc). Any process,
// before clone; single-threaded.
//
// Why one flattened tree and not one directory per layer stacked as overlay lowerdirs: the
// whiteouts of an OCI layer are files named ".wh.NAME", and overlayfs only understands its own
// forms (a 0/0 character device, which an unprivileged user cannot mknod, or, since Linux 6.7,
// an "overlay.whiteout" xattr that also needs matching mount options). Applying whiteouts while
// unpacking works on every kernel, gives the box a single lowerdir (the same mount as
// `--rootfs`, so starting from an image costs what starting from a directory costs), makes
// hardlinks across layers ordinary hardlinks, and costs nothing more than unpacking: the
// layers are extracted once either way. Two images that share lower layers share those layers'
// files when the lower stack is in the store as a tree of its own (a base image): the upper
// image's tree then starts as hard links of it (seed_from); otherwise they do not.
//
// Rules (each has a threat-named unit test in tests/unit/oci_unpack_test.cc):
// - Every path is resolved from the tree's root fd with openat2(RESOLVE_IN_ROOT |
//   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) and then one component with
//   *at() and O_NOFOLLOW: no symlink is ever followed, so nothing lands outside the tree.
// - A parent that is a symlink or a file from a LOWER layer is replaced by a directory (what the
//   overlay of the layers would show); one from the SAME layer makes the layer fail (a layer
//   that plants a symlink and then writes through it is an attack, not an image).
// - Files are always created fresh (O_CREAT|O_EXCL after unlinking what was there), so a write
//   never goes through an existing hardlink or symlink.
// - Hardlink targets must already exist in the tree (this or a lower layer), found without
//   following symlinks; directories cannot be targets.
// - Devices, fifos and sockets are skipped and counted; setuid/setgid are cleared; ownership
//   other than 0:0 and the cleared bits are recorded in a side file.
// - Directory modes and times are applied at the end, deepest first, so a 0555 directory of a
//   lower layer does not stop a later layer from writing into it.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "oci/entry_policy.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::oci {

struct UnpackStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t skipped_devices = 0;
  uint64_t skipped_fifos = 0;
  uint64_t skipped_sockets = 0;
  uint64_t whiteouts = 0;
  uint64_t ownership_records = 0;
  uint64_t dropped_xattrs = 0;
};

// One tar header, as the writer needs it.
struct EntryInfo {
  std::string_view name;
  unsigned file_type = 0;  // S_IFREG, S_IFDIR, ... (libarchive's AE_IF* have the same values)
  mode_t mode = 0;         // permission bits as in the header, set-id included
  int64_t uid = 0, gid = 0;
  int64_t size = 0;
  bool mtime_set = false;
  struct timespec mtime {};
  const char* symlink = nullptr;   // target of a symlink
  const char* hardlink = nullptr;  // target of a hardlink (a name in the layer stack)
  std::vector<std::string> xattr_names;  // not applied (see tree_writer.cc), recorded
};

// The data of a regular file, block by block (sparse files come with offsets).
class EntryData {
 public:
  virtual ~EntryData() = default;
  // Next block; false at the end of the entry's data.
  virtual Result<bool> next(const void** buf, size_t* len, int64_t* offset) = 0;
};

class TreeWriter {
 public:
  // `root` is the (empty) tree directory; the writer keeps its own O_PATH fd of it.
  static Result<TreeWriter> open(int root, const UnpackLimits& limits = {});
  TreeWriter(TreeWriter&&) = default;

  // Starts from the finished tree of the layers below instead of unpacking them again: every
  // non-directory of `src_root` (an open directory) is hard-linked into this (empty) tree, each
  // directory made anew with its mode and time, and `owners_jsonl` (the source's ownership
  // records, may be empty) taken over, so that the layers shared with another image share its
  // inodes. Files are never written in place here (a later layer's file is always created
  // anew), so a shared inode never changes. `file_bytes` is the source's file data count.
  Status seed_from(int src_root, const std::string& owners_jsonl, uint64_t file_bytes);
  // Starts the next layer up. Whiteouts in it hide what the layers before it wrote.
  void begin_layer();
  Status add(const EntryInfo& entry, EntryData& data);
  // Applies deferred directory modes and times and writes the ownership records as JSON lines
  // to `owner_file` (relative to `owner_dirfd`; not created when there are none).
  Status finish(int owner_dirfd, const std::string& owner_file);

  const UnpackStats& stats() const { return stats_; }

  // For layer recipes (layer_split.h): with tracking on, each add() notes the regular file it
  // wrote (if any) and every removal is logged, so that after the last layer the importer can
  // tell which files still hold the bytes their entry brought.
  struct WrittenFile {
    std::string path;   // empty: the entry wrote no file content
    uint64_t seq = 0;
    bool readable = false;  // its owner can read it back
  };
  void track_files(bool on) { track_ = on; }
  // What the last add() wrote.
  const WrittenFile& last_file() const { return last_file_; }
  // Whether the file `f` names is still the one written then: nothing at its path or above it
  // was removed or replaced since.
  bool intact(const WrittenFile& f) const;
  // After finish(): every directory of the tree can be listed and entered by its owner.
  bool dirs_searchable() const;

 private:
  struct DirMeta {
    mode_t mode;
    bool mtime_set;
    struct timespec mtime;
  };
  struct Owner {
    int64_t uid, gid;
    mode_t mode;
    std::vector<std::string> xattrs;
  };

  TreeWriter(UniqueFd root, const UnpackLimits& limits);

  Result<int> parent_fd(const std::string& parent);
  Status replace_existing(int pfd, const std::string& path, const std::string& leaf);
  Status remove_path(int pfd, const std::string& path, const std::string& leaf);
  void forget_below(const std::string& path);
  Status hide_lower(int dfd, const std::string& path);
  Status add_directory(const CleanName& n, const EntryInfo& e);
  Status add_regular(const CleanName& n, const EntryInfo& e, EntryData& data);
  Status add_symlink(const CleanName& n, const EntryInfo& e);
  Status add_hardlink(const CleanName& n, const EntryInfo& e);
  Status add_whiteout(const CleanName& n);
  Status add_opaque(const CleanName& n);
  Status write_data(int fd, const CleanName& n, const EntryInfo& e, EntryData& data);
  Status clone_dir(int src, int dst, const std::string& path, int depth);
  void record_owner(const std::string& path, const EntryInfo& e);

  UniqueFd root_;
  UnpackLimits limits_;
  UnpackStats stats_;
  mode_t umask_ = 022;
  std::unordered_set<std::string> layer_paths_;  // written by the current layer
  std::map<std::string, DirMeta> dirs_;          // deferred directory metadata
  std::map<std::string, Owner> owners_;
  bool track_ = false;
  uint64_t seq_ = 0;
  WrittenFile last_file_;
  std::unordered_map<std::string, uint64_t> removed_at_;  // path -> seq of its last removal
  std::string cached_parent_;
  UniqueFd cached_parent_fd_;
  bool cache_valid_ = false;
};

}  // namespace kern::oci
