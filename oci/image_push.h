// Pushing an image of the store to a registry (kern push): each layer and the config unless the
// repository has it already, mounted from another repository of the same registry when the
// store's names say one holds it, else uploaded in chunks (oci/registry_upload.h); then the
// manifest under the tag. Blobs come from the store, or are re-created from the image's tree
// when the store kept only that (oci/layer_split.h). Progress per blob goes to the observer of
// oci/progress.h. Any process, before clone.
#pragma once

#include <cstdint>
#include <string>

#include "oci/image_record.h"
#include "oci/reference.h"
#include "oci/registry_tls.h"
#include "oci/store.h"

namespace kern::oci {

struct PushOptions {
  TlsRequest tls;  // --tls-verify, --cert-dir
};

struct PushResult {
  std::string digest;  // of the manifest as pushed
  int64_t size = 0;    // its bytes
  size_t uploaded = 0, mounted = 0, existed = 0;  // blobs, by what was done
};

// Pushes `image` as `dest` (a registry reference with a tag). The manifest goes as stored; one
// whose descriptors lack their size (an image loaded from a docker-archive) gets the sizes
// filled in first, and so another digest.
Result<PushResult> push_image(const Store& store, const ImageRecord& image, const Reference& dest,
                              const PushOptions& opts);

}  // namespace kern::oci
