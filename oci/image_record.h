// The records of the local store: one JSON file per image (images/<hex>.json) and one per name
// (refs/<escaped name>.json, a copy of the image record plus the name) so that a box start reads
// exactly one small file. Pure (de)serialisation; any process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oci/image_resolver.h"
#include "runtime/sys/error.h"

namespace kern::oci {

struct ImageRecord {
  std::string ref;                  // name records only: the normalised reference
  std::string digest;               // manifest digest
  std::string manifest_media_type;
  std::string config_digest;
  std::vector<std::string> layers;  // layer blob digests, bottom first
  std::vector<std::string> layer_media_types;
  std::string tree;                 // id of the flattened tree under trees/
  bool has_owners = false;          // trees/<id>.owners.jsonl exists
  uint64_t size = 0;                // bytes of file data in the tree
  std::string created, os, architecture;
  ImageConfig config;
  // For oci:/docker-archive: names, what the source looked like when imported
  // ("size:mtime_ns:ino"), so that an unchanged source is not read again.
  std::string source_stamp;
  // An image kern build made for one step (its cache): without a name it is listed by
  // `kern images -a` only, as Docker's intermediate images are.
  bool intermediate = false;
};

std::string record_to_json(const ImageRecord& r);
Result<ImageRecord> record_from_json(std::string_view text);

// A reference as a file name: bytes outside [A-Za-z0-9._-] become %XX. Names past 200 bytes
// are shortened with a hash of the whole (the record inside names the full reference).
std::string escape_ref(std::string_view ref);

}  // namespace kern::oci
