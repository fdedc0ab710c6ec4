// New images from kern's own layers; see image_commit.h.
#include "oci/image_commit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <optional>

#include "oci/digest.h"
#include "oci/importer.h"
#include "oci/layer_split.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

using json = nlohmann::json;

constexpr std::string_view kDockerLayerTar = "application/vnd.docker.image.rootfs.diff.tar";

// The blobs of the image being committed: its config and manifest in memory, its new layers in
// their files, the parent's layers in the store.
class CommitSource final : public BlobSource {
 public:
  CommitSource(const Store& store, std::map<std::string, std::string> small,
               std::map<std::string, const WrittenLayer*> layers, std::string parent_tree)
      : store_(store), small_(std::move(small)), layers_(std::move(layers)), parent_tree_(std::move(parent_tree)) {}

  Result<std::string> read_blob(const Descriptor& d, size_t limit) override {
    auto it = small_.find(d.digest);
    if (it != small_.end()) return it->second;
    return store_.read_blob(d.digest, limit);
  }

  Result<LayerInput> open_layer(const Descriptor& d, const Staging& staging, size_t index) override {
    auto it = layers_.find(d.digest);
    if (it != layers_.end()) {
      KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(it->second->dirfd, it->second->name, O_RDONLY));
      LayerInput in;
      in.fd = std::move(fd);
      in.staged_dirfd = it->second->dirfd;
      in.staged_name = it->second->name;
      return in;
    }
    if (store_.has_blob(d.digest)) {
      KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(AT_FDCWD, store_.blob_path(d.digest), O_RDONLY));
      LayerInput in;
      in.fd = std::move(fd);
      return in;
    }
    // A parent's uncompressed layer that the store keeps as a recipe of the parent's tree.
    if (!parent_tree_.empty()) {
      auto text = sys::read_file(AT_FDCWD, store_.recipes_path(parent_tree_), size_t{1} << 30);
      if (text) {
        auto recipes = decode_recipes(*text);
        if (recipes) {
          for (const auto& r : *recipes) {
            if (r.diff_id != d.digest) continue;
            KERN_TRY_ASSIGN(UniqueFd tree, sys::open_at(AT_FDCWD, store_.tree_path(parent_tree_), O_RDONLY | O_DIRECTORY));
            std::string name = "parent-layer-" + std::to_string(index) + "-" + std::to_string(++replays_);
            KERN_TRY_ASSIGN(UniqueFd out, staging.create(name, O_RDWR));
            KERN_TRY(replay_recipe(r, tree.get(), out.get()));
            if (::lseek(out.get(), 0, SEEK_SET) != 0) return fail_errno("lseek " + staging.file(name));
            LayerInput in;
            in.fd = std::move(out);
            return in;
          }
        }
      }
    }
    return fail(Error(ErrorKind::image, ENOENT, "layer " + d.digest + " of the parent image is not in the store")
                    .with_hint("kern pull the base image again"));
  }

 private:
  const Store& store_;
  std::map<std::string, std::string> small_;
  std::map<std::string, const WrittenLayer*> layers_;
  std::string parent_tree_;
  unsigned replays_ = 0;  // the importer may ask for one layer twice (unpack, then keep)
};

json descriptor_json(const Descriptor& d) {
  return json{{"mediaType", d.media_type}, {"digest", d.digest}, {"size", d.size}};
}

}  // namespace

std::string rfc3339(int64_t seconds) {
  time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  ::gmtime_r(&t, &tm);
  char buf[40];
  ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void add_history(json& config, const std::string& created, const std::string& created_by, bool empty_layer,
                 const std::string& comment) {
  json h{{"created", created}, {"created_by", created_by}};
  if (!comment.empty()) h["comment"] = comment;
  if (empty_layer) h["empty_layer"] = true;
  if (!config.contains("history") || !config["history"].is_array()) config["history"] = json::array();
  config["history"].push_back(std::move(h));
}

Result<ImageDraft> draft_from(const Store& store, const ImageRecord* parent) {
  ImageDraft d;
  if (!parent) {
    std::string arch = host_architecture();
    d.config = json{{"architecture", arch},
                    {"os", "linux"},
                    {"config", json::object()},
                    {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}},
                    {"history", json::array()}};
    return d;
  }
  KERN_TRY_ASSIGN(std::string manifest_text, store.read_blob(parent->digest, size_t{4} << 20));
  KERN_TRY_ASSIGN(Manifest m, parse_manifest(manifest_text));
  KERN_TRY_ASSIGN(std::string config_text, store.read_blob(parent->config_digest, size_t{16} << 20));
  d.layers = m.layers;
  d.parent_tree = parent->tree;
  // A manifest kern made for a docker-archive names no sizes; a new manifest must: the blob's,
  // or the total of the recipe that re-creates it from the tree.
  std::optional<std::vector<SplitRecipe>> recipes;
  for (auto& l : d.layers) {
    if (l.size >= 0) continue;
    struct stat st;
    if (store.has_blob(l.digest) && ::stat(store.blob_path(l.digest).c_str(), &st) == 0) {
      l.size = st.st_size;
      continue;
    }
    if (!recipes) {
      auto text = sys::read_file(AT_FDCWD, store.recipes_path(parent->tree), size_t{1} << 30);
      if (!text) return fail(Error(text.error()).with_context("the size of layer " + l.digest));
      KERN_TRY_ASSIGN(recipes, decode_recipes(*text));
    }
    for (const auto& r : *recipes)
      if (r.diff_id == l.digest) l.size = static_cast<int64_t>(r.total());
    if (l.size < 0) return fail(ErrorKind::image, 0, "the size of layer " + l.digest + " of image " + parent->digest + " is unknown");
  }
  d.docker_format = m.media_type == media::kDockerManifest || m.config.media_type == media::kDockerConfig;
  d.config = json::parse(config_text, nullptr, false);
  if (!d.config.is_object())
    return fail(ErrorKind::image, 0, "the config of image " + parent->digest + " is not a JSON object");
  if (!d.config.contains("config") || !d.config["config"].is_object()) d.config["config"] = json::object();
  return d;
}

Result<ImageRecord> commit_image(const Store& store, ImageDraft& draft, const std::vector<WrittenLayer>& layers,
                                 const std::vector<std::string>& names) {
  if (draft.layers.empty() && layers.empty())
    return fail(Error(ErrorKind::usage, 0, "an image without any layer cannot be stored")
                    .with_hint("add a COPY or RUN step to a FROM scratch stage"));
  json& rootfs = draft.config["rootfs"];
  if (!rootfs.is_object()) rootfs = json{{"type", "layers"}, {"diff_ids", json::array()}};
  if (!rootfs["diff_ids"].is_array()) rootfs["diff_ids"] = json::array();
  std::map<std::string, const WrittenLayer*> by_digest;
  for (const auto& l : layers) {
    Descriptor d;
    d.media_type = draft.docker_format ? std::string(kDockerLayerTar) : std::string(media::kOciLayer);
    d.digest = l.digest.digest;
    d.size = static_cast<int64_t>(l.digest.size);
    draft.layers.push_back(d);
    rootfs["diff_ids"].push_back(l.digest.digest);
    by_digest[l.digest.digest] = &l;
  }
  std::string config_text = draft.config.dump();
  KERN_TRY_ASSIGN(std::string config_digest, sha256_of(config_text));
  json manifest{{"schemaVersion", 2},
                {"mediaType", draft.docker_format ? media::kDockerManifest : media::kOciManifest},
                {"config",
                 {{"mediaType", draft.docker_format ? media::kDockerConfig : media::kOciConfig},
                  {"digest", config_digest},
                  {"size", config_text.size()}}},
                {"layers", json::array()}};
  for (const auto& d : draft.layers) manifest["layers"].push_back(descriptor_json(d));
  std::string manifest_text = manifest.dump();
  KERN_TRY_ASSIGN(std::string manifest_digest, sha256_of(manifest_text));
  CommitSource src(store, {{config_digest, config_text}, {manifest_digest, manifest_text}}, std::move(by_digest),
                   draft.parent_tree);
  ImportInput in;
  in.manifest = manifest_text;
  in.manifest_digest = manifest_digest;
  in.manifest_media_type = draft.docker_format ? std::string(media::kDockerManifest) : std::string(media::kOciManifest);
  in.names = names;
  KERN_TRY_ASSIGN(ImageRecord rec, import_image(store, src, in));
  draft.parent_tree = rec.tree;
  return rec;
}

}  // namespace kern::oci
