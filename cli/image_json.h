// The JSON object `kern pull --json` and `kern load --json` print for an image of the store:
// reference, manifest digest and media type, config digest, layers with their sizes, sizes.
#pragma once

#include <nlohmann/json.hpp>

#include "oci/image_record.h"
#include "oci/store.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// `reference` may be empty (an unnamed image of an archive).
Result<nlohmann::ordered_json> image_json(const oci::Store& store, const oci::ImageRecord& image,
                                          const std::string& reference);

}  // namespace kern::cli
