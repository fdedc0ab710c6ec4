// Where the blobs of an image come from during an import: an OCI layout directory, a tar
// (docker-archive or OCI archive) or a registry. Any process, before clone.
#pragma once

#include <string>
#include <vector>

#include "oci/manifest.h"
#include "oci/store.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::oci {

struct LayerInput {
  UniqueFd fd;              // the blob, at its first byte
  int64_t length = -1;      // the blob's length when it is part of a larger file
  // Non-empty: the source already copied the blob into a staging dir (staged_dirfd) under this
  // name and verified its digest; the importer moves it into the store as is. Empty: the
  // importer copies the bytes while unpacking and verifies the digest at the end.
  int staged_dirfd = -1;
  std::string staged_name;
};

class BlobSource {
 public:
  virtual ~BlobSource() = default;
  // A small blob (manifest, config); the importer verifies its digest.
  virtual Result<std::string> read_blob(const Descriptor& d, size_t limit) = 0;
  virtual Result<LayerInput> open_layer(const Descriptor& d, const Staging& staging, size_t index) = 0;
};

// One image to import: its manifest (one platform, already chosen) and the names to give it.
struct ImportInput {
  std::string manifest;         // bytes, as the source had them
  std::string manifest_digest;  // verified sha256 of `manifest`
  std::string manifest_media_type;
  std::vector<std::string> names;  // normalised references
  std::string source_stamp;
};

}  // namespace kern::oci
