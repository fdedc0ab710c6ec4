// Pulling from a registry: the registry as a BlobSource (layers downloaded into staging and
// verified before use) and `pull_image`. Any process, before clone.
#pragma once

#include "oci/image_record.h"
#include "oci/reference.h"
#include "oci/store.h"

namespace kern::oci {

// Fetches the manifest of `ref` (resolving an index to linux/<host arch>), verifies a pinned
// digest, and imports the image, named ref.str(). Progress goes to a terminal stderr only.
Result<ImageRecord> pull_image(const Store& store, const Reference& ref, bool quiet);

}  // namespace kern::oci
