// Pulling from a registry: the registry as a BlobSource (layers downloaded into staging and
// verified before use) and `pull_image`, which tries the mirrors registries.conf names for the
// reference, in order, then the registry itself. Any process, before clone.
#pragma once

#include <string>

#include "oci/image_record.h"
#include "oci/reference.h"
#include "oci/registry_tls.h"
#include "oci/store.h"

namespace kern::oci {

struct PullOptions {
  TlsRequest tls;  // --tls-verify, --cert-dir: for every endpoint of this pull
};

struct PullResult {
  ImageRecord image;
  std::string served_by;  // "registry/repository" of the endpoint the image came from
  bool mirror = false;
};

// Fetches the manifest of `ref` (resolving an index to linux/<host arch>), verifies a pinned
// digest, and imports the image, named ref.str(). Layer progress goes to the observer of
// oci/progress.h, if one is installed.
Result<PullResult> pull_image(const Store& store, const Reference& ref, const PullOptions& opts);

// The same with default options; progress to a terminal stderr only, unless `quiet` (kern box's
// pull of a missing image).
Result<ImageRecord> pull_image(const Store& store, const Reference& ref, bool quiet);

}  // namespace kern::oci
