// The image summary of pull and load --json; see image_json.h.
#include "cli/image_json.h"

#include <sys/stat.h>

#include <fcntl.h>

#include <optional>

#include "oci/layer_split.h"
#include "oci/manifest.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {

Result<nlohmann::ordered_json> image_json(const oci::Store& store, const oci::ImageRecord& image,
                                          const std::string& reference) {
  // The layer sizes are in the manifest (the record keeps digests only); it is in the store.
  KERN_TRY_ASSIGN(std::string manifest, store.read_blob(image.digest, 4 << 20));
  KERN_TRY_ASSIGN(oci::Manifest m, oci::parse_manifest(manifest));
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  int64_t compressed = 0;
  std::optional<std::vector<oci::RecipeSummary>> recipes;
  for (const auto& l : m.layers) {
    int64_t size = l.size;
    struct stat st;
    // A docker-archive's manifest is made up on load and gives no sizes; the blob has it, or,
    // where the store kept no blob (kern load), the recipe the tree re-creates the tar from.
    if (size < 0 && ::stat(store.blob_path(l.digest).c_str(), &st) == 0) size = st.st_size;
    if (size < 0 && !recipes) {
      recipes.emplace();
      if (auto text = sys::read_file(AT_FDCWD, store.recipes_path(image.tree), size_t{1} << 30))
        if (auto r = oci::summarise_recipes(*text)) recipes = std::move(*r);
    }
    if (size < 0)
      for (const auto& r : *recipes)
        if (r.diff_id == l.digest) size = static_cast<int64_t>(r.total);
    layers.push_back({{"digest", l.digest}, {"size", size}, {"media_type", l.media_type}});
    compressed += size > 0 ? size : 0;
  }
  nlohmann::ordered_json j;
  j["reference"] = reference.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(reference);
  j["digest"] = image.digest;
  j["media_type"] = image.manifest_media_type;
  j["config_digest"] = image.config_digest;
  j["os"] = image.os;
  j["architecture"] = image.architecture;
  j["layers"] = std::move(layers);
  j["compressed_size"] = compressed;
  j["unpacked_size"] = image.size;
  return j;
}

}  // namespace kern::cli
