// The local image store under $XDG_CACHE_HOME/kern (or ~/.cache/kern). Any process, before
// clone.
//
//   blobs/sha256/<hex>          verified blobs: manifests, configs, layers as received
//   trees/<id>/                 one flattened, read-only root file system per layer chain
//   trees/<id>.owners.jsonl     ownership the unpacker could not reproduce (tree_writer.h)
//   trees/<id>.recipes          how to re-create its uncompressed layers from it (layer_split.h);
//                               such a layer's blob is not kept
//   trees/<id>.lock             flock: shared while a box uses the tree, exclusive to delete it
//   images/<hex>.json           one record per image (manifest digest)
//   refs/<escaped ref>.json     one record per name: the image record plus the name
//   staging/<random>/           work in progress, flock'ed by its owner; a staging dir whose
//                               lock can be taken is a crash leftover and is removed
//   staging/build-<id>/         flock'ed exclusive while one import unpacks tree <id>: a
//                               concurrent import of the same layers (or of layers on top of
//                               them) waits for it and then links its tree instead of
//                               unpacking them again
//   store.lock                  flock: shared by imports, exclusive for rmi and gc
//
// Everything becomes visible by rename(2) of a finished file or directory, records last, so a
// crash or Ctrl-C leaves only staging behind, never a half-written image.
#pragma once

#include <initializer_list>
#include <optional>
#include <set>
#include <sys/types.h>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "oci/image_record.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::oci {

// A private work directory, removed when this object goes away unless its contents were moved.
class Staging {
 public:
  Staging() = default;
  Staging(Staging&&) = default;
  // Removes the staging dir this one held (a retry in a fresh one leaves nothing behind).
  Staging& operator=(Staging&& o) noexcept;
  ~Staging();
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  // A file of this dir by its path, as errors name it (never by its bare internal name).
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Creates file `name` here (O_CREAT | O_EXCL, mode 0600) open with `flags`; writes a whole
  // file. Errors name the file's path.
  Result<UniqueFd> create(const std::string& name, int flags) const;
  Status write(const std::string& name, std::string_view data) const;

 private:
  friend class Store;
  std::string path_;
  std::string name_;
  UniqueFd parent_;  // staging/
  UniqueFd fd_;  // the directory itself, flock'ed exclusive while we live
};

class Store {
 public:
  // Opens the store at `root` (default: paths::cache_dir()). With `create`, makes the layout;
  // without, a missing store is fine (every lookup then misses).
  static Result<Store> open(bool create, const std::string& root = {});

  const std::string& root() const { return root_; }
  std::string blob_path(const std::string& digest) const;
  std::string tree_path(const std::string& tree) const;
  std::string owners_path(const std::string& tree) const;

  // Records. A missing record is std::nullopt; a corrupt one an error.
  Result<std::optional<ImageRecord>> find_ref(const std::string& ref) const;
  Result<std::optional<ImageRecord>> find_image(const std::string& digest) const;
  // Every record of refs/ or images/. One that cannot be read is not skipped in silence: it is
  // listed in `unreadable` (its error names the file), for the caller to report or to stop on.
  // A directory that cannot be listed is an error.
  // Of those, `corrupt` lists the ones whose content is bad (paths under the root, "refs/x.json"):
  // they stay bad, so verbs name them and go on, and gc removes them (see record_corrupt).
  struct Listing {
    std::vector<ImageRecord> records;
    std::vector<Error> unreadable;
    std::vector<std::string> corrupt;
  };
  Result<Listing> list_refs() const;
  Result<Listing> list_images() const;
  // A record is never written larger than a read takes (4 MiB): such an image is refused.
  Status check_record_size(const ImageRecord& r) const;
  Status write_image(const ImageRecord& r) const;
  Status write_ref(const ImageRecord& r) const;  // r.ref names it
  Status remove_ref(const std::string& ref) const;
  Status remove_image(const std::string& digest) const;

  // The trees (ids) and blobs (digests) on disk, in no order.
  Result<std::vector<std::string>> list_trees() const;
  Result<std::vector<std::string>> list_blobs() const;
  bool has_blob(const std::string& digest) const;
  bool has_tree(const std::string& tree) const;
  Result<std::string> read_blob(const std::string& digest, size_t limit) const;
  // Moves a verified file from staging into blobs/ (replacing an identical one is harmless).
  Status commit_blob(int dirfd, const std::string& name, const std::string& digest) const;
  // Writes a small verified blob (manifest, config) through staging.
  Status put_blob(const Staging& s, const std::string& digest, std::string_view data) const;
  // Moves a finished tree (and its owners file, if any) into trees/. If another import got there
  // first the existing tree is kept and ours is dropped with the staging dir.
  // With `replace`, an existing tree is swapped for ours (RENAME_EXCHANGE; two renames where the
  // file system has no such flag) and goes with the staging dir: a damaged tree's repair.
  Status commit_tree(const Staging& s, const std::string& name, const std::string& owners_name,
                     const std::string& tree, const std::string& recipes_name = {}, bool replace = false) const;
  Status remove_blob(const std::string& digest) const;
  std::string recipes_path(const std::string& tree) const;

  Result<UniqueFd> lock_store(bool exclusive) const;
  // A shared lock on a tree that exists (checked after locking, against a concurrent delete).
  Result<UniqueFd> lock_tree_shared(const std::string& tree) const;
  // An exclusive lock, or an invalid fd when a box holds the tree.
  Result<UniqueFd> try_lock_tree_exclusive(const std::string& tree) const;
  Status remove_tree(const std::string& tree) const;

  Result<Staging> begin_staging() const;
  // The build lock of tree `tree` (staging/build-<tree>), exclusive, waiting for another
  // importer that holds it. Best effort: an invalid fd when it cannot be made (a full disk);
  // a duplicate unpack then only costs time, never correctness (commit_tree keeps the first).
  UniqueFd lock_build(const std::string& tree) const;
  // Removes the build lock's directory (its holder, before closing the lock).
  void end_build(const std::string& tree) const;
  // Waits until no import is building tree `tree`.
  void wait_build(const std::string& tree) const;
  // Removes what a failed import added and no record refers to: the tree `tree` (when `tree` is
  // not empty) and the blobs `blobs`. Caller holds the exclusive store lock.
  void drop_unreferenced(const std::string& tree, const std::vector<std::string>& blobs) const;
  // Removes staging dirs whose owner is gone. Returns how many.
  size_t clean_stale_staging() const;
  // Unused blobs and trees (no image record refers to them); images without a name when
  // `dangling_images` is set. Caller holds the exclusive store lock. A record whose content is
  // bad (corrupt, too large) does not stop it: it is named in `bad_records` and, with
  // `remove_bad`, removed; while a name record is bad, unnamed images stay (it may have named
  // one). While a record cannot be read for another reason (EACCES, EIO), what it names is
  // unknown, so nothing is removed and the error names those records.
  struct GcResult {
    size_t images = 0, trees = 0, blobs = 0, staging = 0, busy_trees = 0;
    uint64_t bytes = 0;  // disk space freed (trees and blobs, in allocated blocks)
    std::vector<std::string> deleted_images;  // manifest digests of the image records removed
    std::vector<std::string> bad_records;     // why each bad record could not be read
    size_t removed_bad = 0;                   // of them, removed (remove_bad)
    bool kept_unnamed = false;                // unnamed images kept because a name record was bad
  };
  Result<GcResult> collect(bool dangling_images, bool remove_bad = false) const;

  // Disk space (allocated blocks) of a path under the root ("trees/<id>", "blobs/sha256/<hex>"),
  // not following symlinks; an inode already in `seen` (a hardlink) is not counted again.
  uint64_t disk_use(const std::string& rel, std::set<std::pair<dev_t, ino_t>>& seen) const;
  // A tree with its owners and recipes files.
  uint64_t tree_disk_use(const std::string& tree, std::set<std::pair<dev_t, ino_t>>& seen) const;
  // What removing the tree would free: its directories and the files no other tree links.
  uint64_t tree_unshared_use(const std::string& tree) const;

 private:
  Status write_record(const std::string& dir, const std::string& name, const ImageRecord& r) const;
  // commit_tree's replace without RENAME_EXCHANGE: trees/<tree> into the staging dir, then ours.
  Status replace_tree_by_renames(const Staging& s, const std::string& name, const std::string& dst) const;
  std::string root_;
  UniqueFd fd_;  // O_PATH of root_, or invalid when the store does not exist yet
};

// Whether a record error is about its content (not JSON, not a record, too large) rather than
// a read that may work next time.
bool record_corrupt(const Error& e);

// Fails, naming each record (as a path under the store's root) and why, when any of the listings
// has a record that could not be read for a reason other than its content (record_corrupt);
// `action` says what is therefore not done ("gc removes nothing").
Status refuse_unreadable(const Store& store, std::initializer_list<const Store::Listing*> listings,
                         const std::string& action);

}  // namespace kern::oci
