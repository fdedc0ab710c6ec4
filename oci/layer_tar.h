// Writing one image layer: an uncompressed tar (PAX), entry by entry, hashed as it is written,
// so that its digest (the layer's diff_id, and its blob digest: kern writes layers
// uncompressed) is known at the end without reading it again. Used by kern build (RUN, COPY,
// ADD), kern commit and anything else that makes a layer. Any process, before clone.
//
// Reproducible: entries are written in the order given (callers sort), ids are numbers (no
// user or group names), no atime or ctime, no xattrs; with `clamp_mtime` (SOURCE_DATE_EPOCH) a
// time later than it is written as it. Whiteouts are the image spec's: ".wh.NAME" for a
// deleted NAME, "DIR/.wh..wh..opq" for a directory whose lower contents are hidden.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::oci {

struct LayerDigest {
  std::string digest;  // "sha256:..." of the tar
  uint64_t size = 0;   // bytes
};

// An entry's metadata. `path` is relative to the layer's root, "/"-separated, no leading "/"
// or "./".
struct LayerEntryMeta {
  std::string path;
  mode_t perm = 0644;  // permission bits (07777)
  uint32_t uid = 0, gid = 0;
  int64_t mtime = 0;  // seconds
};

class LayerTar {
 public:
  // Writes to `out_fd` (not closed here).
  static Result<LayerTar> create(int out_fd, std::optional<int64_t> clamp_mtime = std::nullopt);
  LayerTar(LayerTar&&) noexcept;
  LayerTar& operator=(LayerTar&&) noexcept;
  ~LayerTar();

  Status dir(const LayerEntryMeta& m);
  // A regular file: `size` bytes read from `fd` at its current offset (fewer is an error naming
  // `what`, the file's path as the user knows it).
  Status file(const LayerEntryMeta& m, int fd, uint64_t size, const std::string& what);
  Status data(const LayerEntryMeta& m, std::string_view content);
  Status symlink(const LayerEntryMeta& m, const std::string& target);
  // A hard link to `target`, an earlier entry of this layer.
  Status hardlink(const LayerEntryMeta& m, const std::string& target);
  Status whiteout(const std::string& path);  // path: the deleted entry
  Status opaque(const std::string& dir);     // dir: "" for the root
  // Ends the archive; the object is spent.
  Result<LayerDigest> finish();

  size_t entries() const;

  struct State;  // the writer's, opaque

 private:
  explicit LayerTar(std::unique_ptr<State> s);
  Status header(const LayerEntryMeta& m, unsigned type, int64_t size, const std::string* link, bool hard);
  std::unique_ptr<State> s_;
};

}  // namespace kern::oci
