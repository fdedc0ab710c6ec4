// The docker-archive writer; see exporter.h.
#include "oci/exporter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "oci/digest.h"
#include "oci/dl/archive_api.h"
#include "oci/layer_split.h"
#include "oci/manifest.h"
#include "oci/progress.h"
#include "oci/reference.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kConfigLimit = 8 << 20;

// Decompresses a layer blob into `out_fd` and returns the digest of what was written (the
// diff_id). Plain tar blobs pass through unchanged.
Result<std::string> decompress_to(const dl::ArchiveApi& api, const std::string& blob, int out_fd,
                                  const std::string& out_name) {
  KERN_TRY_ASSIGN(UniqueFd in, sys::open_at(AT_FDCWD, blob, O_RDONLY));
  KERN_TRY_ASSIGN(Sha256 hash, Sha256::create());
  progress::Observer* progress = progress::current();
  std::string progress_id = "sha256:" + blob.substr(blob.rfind('/') + 1);
  if (progress) progress->start(progress_id, "writing", ::lseek(in.get(), 0, SEEK_END), true);
  if (progress) (void)::lseek(in.get(), 0, SEEK_SET);
  struct archive* a = api.read_new();
  api.read_support_filter_gzip(a);
  api.read_support_filter_zstd(a);
  api.read_support_filter_xz(a);
  api.read_support_filter_none(a);
  api.read_support_format_raw(a);
  struct archive_entry* e = nullptr;
  Status st;
  if (api.read_open_fd(a, in.get(), 1 << 20) != ARCHIVE_OK || api.read_next_header(a, &e) != ARCHIVE_OK) {
    st = fail(dl::archive_error(api, a, "reading " + blob));
  } else {
    for (;;) {
      const void* buf = nullptr;
      size_t len = 0;
      la_int64_t off = 0;
      int rc = api.read_data_block(a, &buf, &len, &off);
      if (rc == ARCHIVE_EOF) break;
      if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
        st = fail(dl::archive_error(api, a, "decompressing " + blob));
        break;
      }
      hash.update(buf, len);
      if (progress) progress->update(progress_id, ::lseek(in.get(), 0, SEEK_CUR));
      st = sys::write_all(out_fd, std::string_view(static_cast<const char*>(buf), len), "\"" + out_name + "\"");
      if (!st) break;
    }
  }
  api.read_free(a);
  if (!st) return fail(std::move(st).error());
  if (progress) progress->finish(progress_id);
  return hash.finish();
}

struct Writer {
  const dl::ArchiveApi& api;
  struct archive* a;
  struct archive_entry* e;

  Status header(const std::string& name, mode_t type, int64_t size) {
    api.entry_clear(e);
    api.entry_set_pathname(e, name.c_str());
    api.entry_set_filetype(e, type);
    api.entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
    api.entry_set_size(e, size);
    api.entry_set_mtime(e, 0, 0);
    if (api.write_header(a, e) != ARCHIVE_OK) return fail(dl::archive_error(api, a, "writing " + name));
    return {};
  }
  Status data(const void* p, size_t n, const std::string& name) {
    if (api.write_data(a, p, n) != static_cast<la_ssize_t>(n)) return fail(dl::archive_error(api, a, "writing " + name));
    return {};
  }
  Status file(const std::string& name, std::string_view content) {
    KERN_TRY(header(name, AE_IFREG, static_cast<int64_t>(content.size())));
    return data(content.data(), content.size(), name);
  }
  Status copy(const std::string& name, int fd) {
    off_t size = ::lseek(fd, 0, SEEK_END);
    if (size < 0 || ::lseek(fd, 0, SEEK_SET) != 0) return fail_errno("lseek " + name, ErrorKind::image);
    KERN_TRY(header(name, AE_IFREG, size));
    std::vector<char> buf(1 << 20);
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail_errno("read " + name, ErrorKind::image);
      if (n == 0) break;
      KERN_TRY(data(buf.data(), static_cast<size_t>(n), name));
    }
    return {};
  }
};

Unexpected<Error> mismatch(const std::string& what, const std::string& expected, const std::string& actual) {
  return fail(Error(ErrorKind::image, 0,
                    what + " does not match its digest: expected " + expected + ", actual " + actual)
                  .with_hint("the store holds a damaged copy: 'kern image verify --remove' takes it away, then load "
                             "or pull the image again"));
}

// Where each layer of an image comes from: its blob, else the tree's recipe. What is read is
// checked: a blob against its own digest, what it decompresses to (or what the recipe
// re-creates) against the diff_id.
struct LayerSource {
  const Store& store;
  const ImageRecord& image;
  std::optional<std::vector<SplitRecipe>> recipes;
  UniqueFd tree_lock, tree_fd;

  Status write(const dl::ArchiveApi& api, size_t i, const std::string& diff_id, int out_fd,
               const std::string& out_name) {
    auto diff = write_unchecked(api, i, diff_id, out_fd, out_name);
    if (!diff) return fail(std::move(diff).error());
    if (*diff == diff_id) return {};
    if (store.has_blob(image.layers[i]))
      return mismatch("layer blob " + log::quoted(store.blob_path(image.layers[i])) + " (uncompressed)", diff_id,
                      *diff);
    return mismatch(
        "layer " + std::to_string(i + 1) + " re-created from the tree " + log::quoted(store.tree_path(image.tree)),
        diff_id, *diff);
  }

  Result<std::string> write_unchecked(const dl::ArchiveApi& api, size_t i, const std::string& diff_id, int out_fd,
                                      const std::string& out_name) {
    if (store.has_blob(image.layers[i])) {
      std::string path = store.blob_path(image.layers[i]);
      KERN_TRY_ASSIGN(UniqueFd in, sys::open_at(AT_FDCWD, path, O_RDONLY));
      KERN_TRY_ASSIGN(std::string got, sha256_of_fd(in.get()));
      if (got != image.layers[i]) return mismatch("layer blob " + log::quoted(path), image.layers[i], got);
      return decompress_to(api, path, out_fd, out_name);
    }
    if (!recipes) {
      KERN_TRY_ASSIGN(tree_lock, store.lock_tree_shared(image.tree));
      KERN_TRY_ASSIGN(tree_fd, sys::open_at(AT_FDCWD, store.tree_path(image.tree), O_PATH | O_DIRECTORY));
      auto text = sys::read_file(AT_FDCWD, store.recipes_path(image.tree), size_t{1} << 30);
      if (!text && text.error().sys_errno() != ENOENT) return fail(std::move(text).error());
      recipes.emplace();
      if (text) {
        KERN_TRY_ASSIGN(*recipes, decode_recipes(*text));
      }
    }
    for (const auto& r : *recipes) {
      if (r.diff_id != diff_id) continue;
      // Re-created from the tree: the progress display counts it whole when it is written.
      progress::Observer* progress = progress::current();
      int64_t total = static_cast<int64_t>(r.total());
      if (progress) progress->start(diff_id, "writing", total, true);
      auto written = replay_recipe(r, tree_fd.get(), out_fd);
      if (progress && written) progress->update(diff_id, total);
      if (progress) progress->finish(diff_id);
      return written;
    }
    return fail(Error(ErrorKind::image, ENOENT,
                      "layer " + diff_id + " is not in the store (no blob, and its tree cannot re-create it)")
                    .with_hint("pull or load the image again, then save it"));
  }
};

}  // namespace

Status save_docker_archive(const Store& store, const std::vector<SaveItem>& items, int out_fd) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  // Images with the same config are the same image to Docker: one entry, every name.
  std::vector<SaveItem> merged;
  for (const auto& it : items) {
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const SaveItem& m) { return m.image.config_digest == it.image.config_digest; });
    if (same == merged.end()) {
      merged.push_back(it);
      continue;
    }
    for (const auto& n : it.names)
      if (std::find(same->names.begin(), same->names.end(), n) == same->names.end()) same->names.push_back(n);
  }
  KERN_TRY_ASSIGN(Staging staging, store.begin_staging());

  struct archive* a = api->write_new();
  struct archive_entry* e = api->entry_new();
  api->write_set_format_pax_restricted(a);
  api->write_add_filter_none(a);
  api->write_set_bytes_in_last_block(a, 1);
  Writer w{*api, a, e};
  Status st;
  if (api->write_open_fd(a, out_fd) != ARCHIVE_OK) st = fail(dl::archive_error(*api, a, "opening the output"));
  std::set<std::string> written;  // layer dirs and configs already in the archive
  nlohmann::ordered_json manifest = nlohmann::ordered_json::array();
  for (const SaveItem& item : merged) {
    if (!st) break;
    const ImageRecord& image = item.image;
    auto config = store.read_blob(image.config_digest, kConfigLimit);
    if (!config) {
      st = fail(std::move(config).error());
      break;
    }
    auto config_digest = sha256_of(*config);
    if (!config_digest || *config_digest != image.config_digest) {
      st = config_digest ? mismatch("config blob " + log::quoted(store.blob_path(image.config_digest)),
                                    image.config_digest, *config_digest)
                         : fail(std::move(config_digest).error());
      break;
    }
    auto cfg = parse_image_config(*config);
    if (!cfg) {
      st = fail(std::move(cfg).error());
      break;
    }
    if (cfg->diff_ids.size() != image.layers.size()) {
      st = fail(ErrorKind::image, 0, "image config and manifest disagree on the number of layers");
      break;
    }
    LayerSource source{store, image, std::nullopt, {}, {}};
    nlohmann::json layers = nlohmann::json::array();
    for (size_t i = 0; st && i < image.layers.size(); ++i) {
      std::string dir(digest_hex(cfg->diff_ids[i]));
      layers.push_back(dir + "/layer.tar");
      if (!written.insert(dir).second) continue;
      std::string tmp = "layer-" + std::to_string(i) + ".tar";
      auto out = staging.create(tmp, O_RDWR);
      if (!out) {
        st = fail(std::move(out).error());
        break;
      }
      st = source.write(*api, i, cfg->diff_ids[i], out->get(), staging.file(tmp));
      if (st) st = w.header(dir, AE_IFDIR, 0);
      if (st) st = w.copy(dir + "/layer.tar", out->get());
      (void)::unlinkat(staging.fd(), tmp.c_str(), 0);
    }
    std::string cfg_name = std::string(digest_hex(image.config_digest)) + ".json";
    if (st && written.insert(cfg_name).second) st = w.file(cfg_name, *config);
    nlohmann::json tags = nlohmann::json::array();
    for (const auto& n : item.names) tags.push_back(n);
    manifest.push_back({{"Config", cfg_name}, {"RepoTags", tags}, {"Layers", layers}});
  }
  if (st) st = w.file("manifest.json", manifest.dump());
  if (st && api->write_close(a) != ARCHIVE_OK) st = fail(dl::archive_error(*api, a, "finishing the archive"));
  api->entry_free(e);
  api->write_free(a);
  return st;
}

}  // namespace kern::oci
