// Making a new image in the store from an image of it (or from nothing) and layers kern wrote
// (layer_tar.h): the config and manifest are written, and the result is imported as any image
// is (importer.h), so its tree starts as hard links of the parent's and only the new layers are
// unpacked. Used by kern build (after each step that adds a layer, and at the end) and kern
// commit. Any process, before clone.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/image_record.h"
#include "oci/layer_tar.h"
#include "oci/manifest.h"
#include "oci/store.h"

namespace kern::oci {

// A layer tar kern wrote into `dirfd` as `name` (uncompressed: its digest is its diff_id).
struct WrittenLayer {
  LayerDigest digest;
  int dirfd = -1;
  std::string name;
};

// The image being made: the parent's manifest layers (empty for FROM scratch) and the whole
// config document. commit_image appends the new layers to both (rootfs.diff_ids), and
// writes docker media types when the parent's manifest was Docker's, OCI's otherwise.
struct ImageDraft {
  std::vector<Descriptor> layers;
  bool docker_format = false;
  nlohmann::json config;
  std::string parent_tree;  // the tree of the image so far (set by draft_from and commit_image)
};

// The draft of an image of the store (its manifest and config read from the store's blobs), or
// of an empty image for this host's platform (parent: nullptr).
Result<ImageDraft> draft_from(const Store& store, const ImageRecord* parent);

// Appends `layers` to the draft (layers and rootfs.diff_ids), writes config and manifest, imports
// the image and names it `names` (none: an image without a name). The layer files are moved into
// the store or dropped.
Result<ImageRecord> commit_image(const Store& store, ImageDraft& draft, const std::vector<WrittenLayer>& layers,
                                 const std::vector<std::string>& names);

// The config document's history, appended as the image spec says (empty_layer for a step that
// made no layer). `created` is RFC 3339.
void add_history(nlohmann::json& config, const std::string& created, const std::string& created_by,
                 bool empty_layer, const std::string& comment = {});

// Now (or SOURCE_DATE_EPOCH when `epoch` is set) as RFC 3339 UTC.
std::string rfc3339(int64_t seconds);

}  // namespace kern::oci
