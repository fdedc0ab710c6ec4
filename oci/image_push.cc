// Pushing an image; see image_push.h.
#include "oci/image_push.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "oci/digest.h"
#include "oci/layer_split.h"
#include "oci/manifest.h"
#include "oci/progress.h"
#include "oci/registries_conf.h"
#include "oci/registry_client.h"
#include "oci/registry_upload.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kSmallBlobLimit = 8 << 20;  // manifests and configs

// Where the bytes of each blob of the image come from: the store's blob, else (an uncompressed
// layer the store did not keep) the tree's recipe, replayed into staging.
class BlobReader {
 public:
  BlobReader(const Store& store, const ImageRecord& image, const Staging& staging)
      : store_(store), image_(image), staging_(staging) {}

  // The blob's size, without reading it.
  Result<int64_t> size(const std::string& digest) {
    if (store_.has_blob(digest)) {
      struct stat st;
      std::string path = store_.blob_path(digest);
      if (::stat(path.c_str(), &st) != 0) return fail_errno("stat " + log::quoted(path), ErrorKind::image);
      return static_cast<int64_t>(st.st_size);
    }
    KERN_TRY_ASSIGN(const SplitRecipe* r, recipe(digest));
    return static_cast<int64_t>(r->total());
  }

  // The blob open for reading from offset 0.
  Result<UniqueFd> open(const std::string& digest, size_t index) {
    if (store_.has_blob(digest)) return sys::open_at(AT_FDCWD, store_.blob_path(digest), O_RDONLY);
    KERN_TRY_ASSIGN(const SplitRecipe* r, recipe(digest));
    std::string name = "push-layer-" + std::to_string(index);
    KERN_TRY_ASSIGN(UniqueFd out, staging_.create(name, O_RDWR));
    KERN_TRY_ASSIGN(std::string got, replay_recipe(*r, tree_fd_.get(), out.get()));
    if (got != digest)
      return fail(Error(ErrorKind::image, 0,
                        "layer " + digest + " re-created from the tree " + log::quoted(store_.tree_path(image_.tree)) +
                            " does not match its digest (got " + got + ")")
                      .with_hint("the store holds a damaged copy: 'kern image verify --remove' takes it away, "
                                 "then load or pull the image again"));
    if (::lseek(out.get(), 0, SEEK_SET) != 0) return fail_errno("lseek " + staging_.file(name), ErrorKind::image);
    return out;
  }

 private:
  Result<const SplitRecipe*> recipe(const std::string& digest) {
    if (!recipes_) {
      KERN_TRY_ASSIGN(tree_lock_, store_.lock_tree_shared(image_.tree));
      KERN_TRY_ASSIGN(tree_fd_, sys::open_at(AT_FDCWD, store_.tree_path(image_.tree), O_PATH | O_DIRECTORY));
      auto text = sys::read_file(AT_FDCWD, store_.recipes_path(image_.tree), size_t{1} << 30);
      if (!text && text.error().sys_errno() != ENOENT) return fail(std::move(text).error());
      recipes_.emplace();
      if (text) {
        KERN_TRY_ASSIGN(*recipes_, decode_recipes(*text));
      }
    }
    // Only an uncompressed layer is re-created: its digest is its diff_id.
    for (const auto& r : *recipes_)
      if (r.diff_id == digest) return &r;
    return fail(Error(ErrorKind::image, ENOENT,
                      "blob " + digest + " of " + image_.digest + " is not in the store (no blob, and the tree "
                      "cannot re-create it)")
                    .with_hint("pull or load the image again, then push it"));
  }

  const Store& store_;
  const ImageRecord& image_;
  const Staging& staging_;
  std::optional<std::vector<SplitRecipe>> recipes_;
  UniqueFd tree_lock_, tree_fd_;
};

// Other repositories of the same registry that the store's names say hold each blob: where a
// mount may find it.
Result<std::map<std::string, std::vector<std::string>>> mount_sources(const Store& store, const Reference& dest) {
  std::map<std::string, std::vector<std::string>> out;
  KERN_TRY_ASSIGN(Store::Listing refs, store.list_refs());
  for (const auto& r : refs.records) {
    auto ref = parse_reference(r.ref);
    if (!ref || ref->kind != Reference::Kind::registry || ref->registry != dest.registry ||
        ref->repository == dest.repository)
      continue;
    std::vector<std::string> blobs = r.layers;
    blobs.push_back(r.config_digest);
    for (const auto& b : blobs) {
      auto& repos = out[b];
      if (std::find(repos.begin(), repos.end(), ref->repository) == repos.end()) repos.push_back(ref->repository);
    }
  }
  return out;
}

struct Blob {
  std::string digest;
  int64_t declared = -1;  // the manifest's size
  bool config = false;
  size_t index = 0;       // layers
};

}  // namespace

Result<PushResult> push_image(const Store& store, const ImageRecord& image, const Reference& dest,
                              const PushOptions& opts) {
  if (dest.kind != Reference::Kind::registry || dest.tag.empty())
    return fail(ErrorKind::usage, 0, "push needs a registry reference with a tag, not \"" + dest.str() + "\"");
  // Imports may run beside a push; rmi and gc wait until it is done.
  KERN_TRY_ASSIGN(UniqueFd store_lock, store.lock_store(false));
  KERN_TRY_ASSIGN(std::string manifest, store.read_blob(image.digest, kSmallBlobLimit));
  KERN_TRY_ASSIGN(std::string manifest_digest, sha256_of(manifest));
  if (manifest_digest != image.digest)
    return fail(Error(ErrorKind::image, 0, "manifest blob " + log::quoted(store.blob_path(image.digest)) +
                                               " does not match its digest (got " + manifest_digest + ")")
                    .with_hint("the store holds a damaged copy: 'kern image verify --remove' takes it away, then "
                               "load or pull the image again"));
  KERN_TRY_ASSIGN(Manifest m, parse_manifest(manifest));
  std::vector<Blob> blobs;
  for (size_t i = 0; i < m.layers.size(); ++i) blobs.push_back(Blob{m.layers[i].digest, m.layers[i].size, false, i});
  blobs.push_back(Blob{m.config.digest, m.config.size, true, 0});

  KERN_TRY_ASSIGN(RegistriesConf conf, load_registries_conf());
  ClientOptions copts;
  KERN_TRY_ASSIGN(copts.tls, tls_settings_for(dest.registry, opts.tls, registry_insecure(conf, dest.registry)));
  copts.actions = "pull,push";
  KERN_TRY_ASSIGN(auto client, RegistryClient::create(dest, std::move(copts)));
  KERN_TRY_ASSIGN(auto sources, mount_sources(store, dest));
  KERN_TRY_ASSIGN(Staging staging, store.begin_staging());
  BlobReader reader(store, image, staging);
  progress::Observer* progress = progress::current();
  int64_t chunk = push_chunk_size();
  PushResult result;
  std::vector<int64_t> sizes;

  for (const Blob& b : blobs) {
    KERN_TRY_ASSIGN(int64_t size, reader.size(b.digest));
    if (b.declared >= 0 && b.declared != size)
      return fail(ErrorKind::image, 0, "blob " + b.digest + " has " + std::to_string(size) +
                                           " bytes in the store, the manifest says " + std::to_string(b.declared));
    sizes.push_back(size);
    KERN_TRY_ASSIGN(bool exists, blob_exists(*client, b.digest));
    if (exists) {
      if (progress) {
        progress->start(b.digest, "exists", size, true);
        progress->update(b.digest, size);
        progress->finish(b.digest);
      }
      ++result.existed;
      continue;
    }
    std::optional<UploadStart> start;
    bool mounted = false;
    auto from = sources.find(b.digest);
    if (from != sources.end()) {
      for (const auto& repo : from->second) {
        if (progress) progress->start(b.digest, "mounting", size, true);
        // A repository this account may not read is no reason to fail: the next one, or an
        // upload, follows.
        auto s = start_upload(*client, b.digest, repo);
        if (!s) continue;
        mounted = s->mounted;
        if (!mounted) start = std::move(*s);
        break;
      }
    }
    if (mounted) {
      if (progress) {
        progress->update(b.digest, size);
        progress->finish(b.digest);
      }
      ++result.mounted;
      continue;
    }
    if (!start) {
      KERN_TRY_ASSIGN(UploadStart s, start_upload(*client));
      start = std::move(s);
    }
    std::string config_bytes;
    UniqueFd fd;
    if (b.config) {
      KERN_TRY_ASSIGN(config_bytes, store.read_blob(b.digest, kSmallBlobLimit));
    } else {
      KERN_TRY_ASSIGN(fd, reader.open(b.digest, b.index));
    }
    KERN_TRY_ASSIGN(Sha256 hash, Sha256::create());
    auto read = [&](int64_t offset, int64_t n, std::string& buf) -> Status {
      buf.resize(static_cast<size_t>(n));
      if (b.config) {
        buf = config_bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(n));
      } else {
        for (int64_t done = 0; done < n;) {
          ssize_t got = ::pread(fd.get(), buf.data() + done, static_cast<size_t>(n - done), offset + done);
          if (got < 0 && errno == EINTR) continue;
          if (got < 0) return fail_errno("read blob " + b.digest, ErrorKind::image);
          if (got == 0) return fail(ErrorKind::image, EIO, "blob " + b.digest + " ended early");
          done += got;
        }
      }
      hash.update(buf.data(), buf.size());
      if (offset + n == size) {
        std::string got = hash.finish();
        if (got != b.digest)
          return fail(Error(ErrorKind::image, 0, "blob " + log::quoted(store.blob_path(b.digest)) +
                                                     " does not match its digest (got " + got + ")")
                          .with_hint("the store holds a damaged copy: 'kern image verify --remove' takes it away, "
                                     "then load or pull the image again"));
      }
      return {};
    };
    if (progress) progress->start(b.digest, "uploading", size, true);
    KERN_TRY(upload_blob(*client, start->location, b.digest, size, chunk, read, [&](int64_t sent) {
      if (progress) progress->update(b.digest, sent);
    }));
    if (progress) progress->finish(b.digest);
    ++result.uploaded;
  }

  // A manifest without sizes (kern load's of a docker-archive) is completed: registries and
  // other clients check a blob's size against its descriptor.
  std::string body = manifest;
  bool sizeless = false;
  for (const Blob& b : blobs) sizeless = sizeless || b.declared < 0;
  auto j = nlohmann::ordered_json::parse(manifest, nullptr, false);
  if (sizeless) {
    if (!j.is_object() || !j.contains("layers") || !j["layers"].is_array() || !j.contains("config"))
      return fail(ErrorKind::image, 0, "manifest " + image.digest + " is not an image manifest");
    for (size_t i = 0; i < m.layers.size(); ++i) j["layers"][i]["size"] = sizes[i];
    j["config"]["size"] = sizes.back();
    body = j.dump();
  }
  std::string media_type = image.manifest_media_type;
  if (media_type.empty() && j.is_object() && j.contains("mediaType") && j["mediaType"].is_string())
    media_type = j["mediaType"].get<std::string>();
  if (media_type.empty()) media_type = std::string(media::kOciManifest);
  KERN_TRY_ASSIGN(result.digest, sha256_of(body));
  result.size = static_cast<int64_t>(body.size());
  KERN_TRY_ASSIGN(std::string theirs, put_manifest(*client, dest.tag, body, media_type));
  if (!theirs.empty() && theirs != result.digest)
    return fail(ErrorKind::image, 0, "the registry stored the manifest of " + dest.str() + " as " + theirs +
                                         ", not as " + result.digest);
  return result;
}

}  // namespace kern::oci
