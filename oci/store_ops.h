// What the image verbs do to the store: look an image up by name or id, tag, remove, collect.
// Any process, before clone.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/image_record.h"
#include "oci/store.h"

namespace kern::oci {

// An image id or digest as `kern images` prints it: at least 4 lower-case hex digits, with or
// without "sha256:".
bool looks_like_image_id(std::string_view text);
// The image whose config digest (else manifest digest) starts with the id `text`; nullopt when
// none or `text` is no id, an error when two images match.
Result<std::optional<ImageRecord>> find_image_by_id(const Store& store, const std::string& text);

// Finds an image by reference ("busybox", "oci:/x:t") or by id (a unique prefix of at least 4
// hex digits of the config digest, as `kern images` shows it, or of the manifest digest, with
// or without "sha256:"). ErrorKind::image when absent.
Result<ImageRecord> lookup_image(const Store& store, const std::string& text);

// kern tag SRC DST: DST names what SRC names (DST must be a registry-style reference).
Result<std::string> tag_image(const Store& store, const std::string& src, const std::string& dst);

struct RemoveResult {
  std::vector<std::string> untagged;  // names removed
  std::vector<std::string> deleted;   // image digests removed
  std::vector<std::string> removed_bad;  // why each name removed had a bad record
  Store::GcResult gc;
};
// kern rmi REF...: removes the names; an image left without names is removed with its tree and
// blobs unless another image shares them or a box is using the tree (then gc takes it later).
// A name whose record is bad (record_corrupt) is removed as it is. Bad records elsewhere do not
// stop it: gc.bad_records names them.
Result<RemoveResult> remove_images(const Store& store, const std::vector<std::string>& refs);

// kern image prune [-a]: removes the images without a name (with -a, also every named image
// whose tree no box is using, with its names), then what no image needs any more. `untagged`
// lists the names removed, gc.deleted_images the image records, gc.bytes the space freed.
Result<RemoveResult> prune_images(const Store& store, bool all);

// kern system df: what the store holds and what `kern image prune -a` would free now.
struct DiskUsage {
  size_t images = 0, active_images = 0;  // image records; those whose tree a box is using
  size_t trees = 0, active_trees = 0;
  size_t blobs = 0;
  uint64_t tree_bytes = 0, blob_bytes = 0;
  uint64_t reclaimable_tree_bytes = 0, reclaimable_blob_bytes = 0;
  std::vector<std::string> bad_records;  // records left out of the count, each with why
};
Result<DiskUsage> disk_usage(const Store& store);

// One warning per bad record on stderr: what it is, why, and `fate` ("left out; 'kern gc'
// removes it").
void warn_bad_records(const std::vector<std::string>& bad, const std::string& fate);

}  // namespace kern::oci
