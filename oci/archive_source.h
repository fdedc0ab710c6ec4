// Image sources on the local file system: an OCI image layout directory (oci:DIR[:TAG]) and a
// tar file holding either a `docker save` archive (manifest.json) or an OCI layout (index.json
// + oci-layout). Any process, before clone.
//
// A tar is read in two passes: the first keeps the small JSON files in memory and notes the
// rest; the second copies the layer entries into a staging dir, hashing them on the way, so
// that the importer can unpack them in the order the manifest gives (which need not be the
// order of the tar).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "oci/blob_source.h"
#include "oci/store.h"

namespace kern::oci {

class LayoutDirSource final : public BlobSource {
 public:
  static Result<std::unique_ptr<LayoutDirSource>> open(const std::string& dir);
  Result<std::string> read_blob(const Descriptor& d, size_t limit) override;
  Result<LayerInput> open_layer(const Descriptor& d, const Staging& staging, size_t index) override;
  Result<std::string> read_file(const std::string& name, size_t limit);

 private:
  std::string dir_;
  UniqueFd root_;
};

class TarSource final : public BlobSource {
 public:
  // Pass one. `store` provides the staging dir for pass two.
  static Result<std::unique_ptr<TarSource>> open(const std::string& path, const Store& store);
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Makes the small entry `name` readable as the blob `digest` (a docker-archive's config).
  void add_known_blob(const std::string& digest, const std::string& name) { known_[digest] = name; }
  // A small entry's content, or nullptr.
  const std::string* small(const std::string& name) const;
  // Pass two: copies these entries into staging and hashes them. For names of the form
  // "blobs/sha256/<hex>" the hash must match the name.
  Status stage(const std::set<std::string>& names);
  // The digest of a staged entry.
  std::optional<std::string> staged_digest(const std::string& name) const;
  // The OCI layer media type of a staged entry, from its first bytes (tar, gzip, zstd).
  std::string staged_media_type(const std::string& name) const;
  // Whether entry `name` is an uncompressed tar whose bytes lie contiguous in the (uncompressed)
  // archive at a verified offset: the importer can then read it in place, no staging copy.
  bool readable_in_place(const std::string& name) const;
  // Reads entry `name` in place when the importer asks for blob `digest`.
  void map_in_place(const std::string& digest, const std::string& name) { in_place_[digest] = name; }

  Result<std::string> read_blob(const Descriptor& d, size_t limit) override;
  Result<LayerInput> open_layer(const Descriptor& d, const Staging& staging, size_t index) override;

 private:
  struct Staged {
    std::string file, digest;
    std::string magic;  // first bytes, to tell gzip and zstd from tar
  };
  std::string path_;
  const Store* store_ = nullptr;
  struct Entry {
    int64_t size = 0;
    int64_t offset = -1;  // of the data in the archive file, when verified
    std::string head;     // the first bytes of the data (up to 512)
  };
  std::map<std::string, Entry> entries_;     // regular files
  std::map<std::string, std::string> small_;
  std::optional<Staging> staging_;
  std::map<std::string, Staged> staged_;     // by entry name
  std::map<std::string, std::string> by_digest_;
  std::map<std::string, std::string> known_;  // digest -> small entry name
  std::map<std::string, std::string> in_place_;  // digest -> entry read in place
};

// Whether `head`, the first bytes of a stream (up to 512), can begin an image archive: a tar
// header with a valid checksum, or gzip, zstd or xz data. Lets `kern load` refuse a stream that
// is no archive (/dev/zero, a text file) before it writes any of it to disk.
bool archive_head_plausible(std::string_view head);

// The images of an OCI layout index (index.json text) as import inputs. With `tag`, only the
// entry whose org.opencontainers.image.ref.name is `tag`; with `all`, every entry (kern load);
// otherwise the only entry (or the one tagged "latest"). Indexes are resolved to the host's
// platform. `name_for` maps an entry to the names it gets.
Result<std::vector<ImportInput>> layout_inputs(
    BlobSource& src, std::string_view index_json, const std::string& tag, bool all,
    const std::function<std::vector<std::string>(const Descriptor&)>& name_for);

// The images of a docker-archive (manifest.json) as import inputs, with manifests made from the
// staged layers. Stages the layers first. RepoTags become names when `use_repo_tags`.
Result<std::vector<ImportInput>> docker_archive_inputs(TarSource& src, bool use_repo_tags);

// Which layer entries an OCI archive's inputs need (for TarSource::stage).
std::set<std::string> layout_layer_entries(const std::vector<ImportInput>& inputs);

}  // namespace kern::oci
