// kern image verify: every blob of the store checked against its digest, every tree against the
// layers it can re-create, every record read. Any process, before clone.
#pragma once

#include <string>
#include <vector>

#include "oci/store.h"

namespace kern::oci {

struct VerifyResult {
  size_t blobs = 0, trees = 0, records = 0;  // checked
  size_t trees_without_recipe = 0;           // trees whose layers are all kept as blobs
  struct Bad {
    std::string what;   // "blob", "tree" or "record"
    std::string path;   // the file or directory
    std::string why;    // expected and actual digest, or the error
    bool removed = false;
  };
  std::vector<Bad> bad;
};

// Whether the stored parts of `rec` match their digests: its manifest, config and layer blobs,
// and its tree as far as its recipes re-create layers. The damaged blobs' digests are added to
// `bad_blobs`.
bool image_intact(const Store& store, const ImageRecord& rec, std::vector<std::string>& bad_blobs);

// Checks the store; with `remove`, takes away what is bad (a blob, a tree no box is using, a
// record whose content is bad) so that the next load or pull of a good copy brings it again.
Result<VerifyResult> verify_store(const Store& store, bool remove);

}  // namespace kern::oci
