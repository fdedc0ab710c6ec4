// Choosing the source of an image and importing it; see image_sources.h.
#include "oci/image_sources.h"

#include <sys/stat.h>

#include "oci/archive_source.h"
#include "oci/importer.h"
#include "oci/registry_source.h"
#include "runtime/sys/log.h"

namespace kern::oci {
namespace {

Unexpected<Error> bad(const std::string& what) { return fail(ErrorKind::image, 0, what); }

// Names for an image found in an OCI layout or archive index entry.
std::vector<std::string> names_from_annotations(const Descriptor& d) {
  std::vector<std::string> out;
  for (const std::string& candidate : {d.image_name, d.ref_name}) {
    if (candidate.empty()) continue;
    // A bare tag ("latest") names no repository; a full reference does.
    if (candidate.find('/') == std::string::npos && candidate.find(':') == std::string::npos) continue;
    auto r = parse_reference(candidate);
    if (r && r->kind == Reference::Kind::registry) {
      out.push_back(r->str());
      break;
    }
  }
  return out;
}

Result<ImageRecord> import_one(const Store& store, BlobSource& src, ImportInput in) {
  return import_image(store, src, in);
}

}  // namespace

std::string source_stamp(const Reference& ref) {
  std::string path = ref.path;
  if (ref.kind == Reference::Kind::oci_layout) path += "/index.json";
  else if (ref.kind != Reference::Kind::docker_archive) return {};
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
}

Result<ImageRecord> import_reference(const Store& store, const Reference& ref, bool quiet) {
  switch (ref.kind) {
    case Reference::Kind::registry:
      return pull_image(store, ref, quiet);
    case Reference::Kind::oci_layout: {
      KERN_TRY_ASSIGN(auto src, LayoutDirSource::open(ref.path));
      KERN_TRY_ASSIGN(std::string index, src->read_file("index.json", 4 << 20));
      KERN_TRY_ASSIGN(auto inputs, layout_inputs(*src, index, ref.tag, false, nullptr));
      ImportInput in = std::move(inputs.front());
      in.names = {ref.str()};
      in.source_stamp = source_stamp(ref);
      return import_one(store, *src, std::move(in));
    }
    case Reference::Kind::docker_archive: {
      KERN_TRY_ASSIGN(auto src, TarSource::open(ref.path, store));
      if (src->small("manifest.json") == nullptr) return bad("\"" + ref.path + "\" is not a docker-archive (no manifest.json)");
      KERN_TRY_ASSIGN(auto inputs, docker_archive_inputs(*src, false));
      if (inputs.size() != 1)
        return bad("\"" + ref.path + "\" holds " + std::to_string(inputs.size()) + " images; load it with 'kern load'");
      ImportInput in = std::move(inputs.front());
      in.names = {ref.str()};
      in.source_stamp = source_stamp(ref);
      return import_one(store, *src, std::move(in));
    }
  }
  return bad("unknown reference kind");
}

Result<std::vector<LoadedImage>> load_archive(const Store& store, const std::string& path) {
  KERN_TRY_ASSIGN(auto src, TarSource::open(path, store));
  std::vector<ImportInput> inputs;
  if (src->small("manifest.json") != nullptr) {
    KERN_TRY_ASSIGN(inputs, docker_archive_inputs(*src, true));
  } else if (const std::string* index = src->small("index.json")) {
    if (!src->has("oci-layout")) return bad("\"" + path + "\" has index.json but no oci-layout file");
    KERN_TRY_ASSIGN(inputs, layout_inputs(*src, *index, "", true, names_from_annotations));
    KERN_TRY(src->stage(layout_layer_entries(inputs)));
  } else {
    return bad("\"" + path + "\" is neither a docker-archive (manifest.json) nor an OCI archive (index.json)");
  }
  std::vector<LoadedImage> out;
  for (auto& in : inputs) {
    std::vector<std::string> names = in.names;
    KERN_TRY_ASSIGN(ImageRecord rec, import_one(store, *src, std::move(in)));
    out.push_back(LoadedImage{std::move(rec), std::move(names)});
  }
  return out;
}

}  // namespace kern::oci
