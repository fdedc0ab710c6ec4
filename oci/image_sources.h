// From a reference or an archive file to images in the store: picks the source (registry, OCI
// layout, docker-archive, archive for `kern load`) and runs the importer. Any process, before
// clone; this is the slow path that loads libarchive, libcrypto and, for registries, libcurl.
#pragma once

#include <string>
#include <vector>

#include "oci/image_record.h"
#include "oci/reference.h"
#include "oci/store.h"

namespace kern::oci {

// What a local source looks like now ("size:mtime_ns:ino" of the file, or of a layout's
// index.json): an image imported from it is reused while this stays the same.
std::string source_stamp(const Reference& ref);

// Imports the image `ref` names, from wherever it lives, and names it ref.str(). `quiet`
// silences the progress lines.
Result<ImageRecord> import_reference(const Store& store, const Reference& ref, bool quiet);

struct LoadedImage {
  ImageRecord image;
  std::vector<std::string> names;  // the names this load gave it
};
// kern load: every image of a docker-archive or OCI archive tar, named by its RepoTags or
// annotations.
Result<std::vector<LoadedImage>> load_archive(const Store& store, const std::string& path);

}  // namespace kern::oci
