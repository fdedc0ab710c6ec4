// Importing one image into the store: blobs verified, layers unpacked into one flattened tree in
// staging, then renamed into place, records last. Any process, before clone.
#pragma once

#include <functional>
#include <string>

#include "oci/blob_source.h"
#include "oci/image_record.h"
#include "oci/store.h"

namespace kern::oci {

// Imports `in` from `src` into `store` (which the caller opened with create=true) and names it.
// Takes the store's shared lock for the duration. An image whose tree is already there is only
// named. `progress` (may be empty) is told each layer as it starts.
Result<ImageRecord> import_image(const Store& store, BlobSource& src, const ImportInput& in,
                                 const std::function<void(size_t, size_t, const Descriptor&)>& progress = {});

// Names an image that is already in the store.
Status name_image(const Store& store, const ImageRecord& image, const std::string& ref,
                  const std::string& source_stamp = {});

}  // namespace kern::oci
