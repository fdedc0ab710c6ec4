// OCI layout directories and image tars as import sources; see archive_source.h.
#include "oci/archive_source.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "oci/digest.h"
#include "oci/dl/archive_api.h"
#include "oci/reference.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kSmallEntry = 8 << 20;
constexpr size_t kManifestLimit = 4 << 20;
constexpr unsigned long long kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

std::string blob_name(const std::string& digest) { return "blobs/sha256/" + std::string(digest_hex(digest)); }

Unexpected<Error> bad(const std::string& what) { return fail(ErrorKind::image, 0, what); }

// Every file of an image source is opened with O_NONBLOCK and must then be a regular file: open
// of a FIFO would wait for a writer forever, and a FIFO, device or socket read after it would
// block or never end. Once it is known to be a regular file the flag is cleared (it means
// nothing for regular files, but readers should not have to know).
constexpr int kSourceOpen = O_RDONLY | O_NONBLOCK | O_NOCTTY;

const char* file_kind(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFDIR: return "a directory";
    default: return "not a regular file";
  }
}

Result<UniqueFd> regular_only(Result<UniqueFd> opened, const std::string& shown) {
  if (!opened) return fail(ErrorKind::image, opened.error().sys_errno(), "open \"" + shown + "\"");
  int fd = opened->get();
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail_errno("fstat \"" + shown + "\"", ErrorKind::image);
  if (!S_ISREG(st.st_mode))
    return fail(ErrorKind::image, 0, "\"" + shown + "\" is " + file_kind(st.st_mode) + ", not a regular file");
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return fail_errno("fcntl \"" + shown + "\"", ErrorKind::image);
  return opened;
}

std::string layer_media_type(std::string_view magic) {
  if (magic.size() >= 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b)
    return std::string(media::kOciLayerGzip);
  if (magic.size() >= 4 && magic.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4))
    return std::string(media::kOciLayerZstd);
  return std::string(media::kOciLayer);
}

// Reads a manifest or index blob and resolves an index to the host's platform.
Result<ImportInput> resolve_entry(BlobSource& src, const Descriptor& d, int depth = 0) {
  KERN_TRY_ASSIGN(std::string body, src.read_blob(d, kManifestLimit));
  KERN_TRY_ASSIGN(std::string got, sha256_of(body));
  if (got != d.digest) return bad("manifest " + d.digest + ": digest mismatch (got " + got + ")");
  KERN_TRY_ASSIGN(ManifestKind kind, manifest_kind(body, d.media_type));
  if (kind == ManifestKind::index) {
    if (depth > 2) return bad("image indexes nested too deep");
    KERN_TRY_ASSIGN(Index idx, parse_index(body));
    KERN_TRY_ASSIGN(Descriptor chosen, choose_platform(idx, host_architecture()));
    return resolve_entry(src, chosen, depth + 1);
  }
  ImportInput in;
  in.manifest = std::move(body);
  in.manifest_digest = d.digest;
  in.manifest_media_type = d.media_type;
  return in;
}

}  // namespace

bool archive_head_plausible(std::string_view head) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 2 && byte(0) == 0x1f && byte(1) == 0x8b) return true;
  if (head.size() >= 4 && head.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4)) return true;
  if (head.size() >= 6 && head.substr(0, 6) == std::string_view("\xfd" "7zXZ\0", 6)) return true;
  if (head.size() < 512) return false;
  // A tar header: the checksum field (octal, bytes 148-155) is the sum of the header's bytes
  // with that field counted as spaces. An all-zero block (an empty archive) sums to 256, never 0.
  unsigned long want = 0;
  size_t i = 148;
  while (i < 156 && head[i] == ' ') ++i;
  size_t digits = 0;
  for (; i < 156 && head[i] >= '0' && head[i] <= '7'; ++i, ++digits)
    want = want * 8 + static_cast<unsigned>(head[i] - '0');
  if (digits == 0) return false;
  // Some old writers summed signed chars; libarchive takes either, and so does this.
  long sum = 0, signed_sum = 0;
  for (size_t k = 0; k < 512; ++k) {
    bool field = k >= 148 && k < 156;
    sum += field ? ' ' : byte(k);
    signed_sum += field ? ' ' : static_cast<signed char>(head[k]);
  }
  return sum == static_cast<long>(want) || signed_sum == static_cast<long>(want);
}

// ---- OCI layout directory ----

Result<std::unique_ptr<LayoutDirSource>> LayoutDirSource::open(const std::string& dir) {
  auto s = std::make_unique<LayoutDirSource>();
  s->dir_ = dir;
  auto fd = sys::open_at(AT_FDCWD, dir, O_PATH | O_DIRECTORY);
  if (!fd) return fail(ErrorKind::image, fd.error().sys_errno(), "OCI layout \"" + dir + "\"");
  s->root_ = std::move(*fd);
  auto layout = s->read_file("oci-layout", 4096);
  if (!layout && layout.error().sys_errno() == ENOENT)
    return fail(ErrorKind::image, 0, "\"" + dir + "\" is not an OCI image layout (no oci-layout file)");
  if (!layout) return fail(std::move(layout).error());
  return s;
}

Result<std::string> LayoutDirSource::read_file(const std::string& name, size_t limit) {
  KERN_TRY_ASSIGN(UniqueFd fd, regular_only(sys::open_beneath(root_.get(), name, kSourceOpen, kInRoot), dir_ + "/" + name));
  auto r = sys::read_all(fd.get(), limit, name);
  if (!r) return fail(ErrorKind::image, r.error().sys_errno(), r.error().message());
  return r;
}

Result<std::string> LayoutDirSource::read_blob(const Descriptor& d, size_t limit) {
  return read_file(blob_name(d.digest), limit);
}

Result<LayerInput> LayoutDirSource::open_layer(const Descriptor& d, const Staging&, size_t) {
  std::string name = blob_name(d.digest);
  LayerInput in;
  KERN_TRY_ASSIGN(in.fd, regular_only(sys::open_beneath(root_.get(), name, kSourceOpen, kInRoot), dir_ + "/" + name));
  return in;
}

// ---- tar files ----

Result<std::unique_ptr<TarSource>> TarSource::open(const std::string& path, const Store& store) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  auto s = std::make_unique<TarSource>();
  s->path_ = path;
  s->store_ = &store;
  // Read more than once (an index pass, then the entries): it must be a file, not a stream.
  auto fd = regular_only(sys::open_at(AT_FDCWD, path, kSourceOpen), path);
  if (!fd) {
    Error e = std::move(fd).error();
    if (e.sys_errno() != 0) return fail(std::move(e));
    return fail(std::move(e).with_hint("an archive from a pipe goes on standard input: kern load < ARCHIVE"));
  }
  struct archive* a = api->read_new();
  api->read_support_format_tar(a);
  api->read_support_filter_gzip(a);
  api->read_support_filter_zstd(a);
  api->read_support_filter_xz(a);
  api->read_support_filter_none(a);
  Status st;
  // Header positions of every entry, in order, to find where each entry's data lies.
  std::vector<std::pair<std::string, int64_t>> order;
  if (api->read_open_fd(a, fd->get(), 1 << 20) != ARCHIVE_OK) {
    st = fail(dl::archive_error(*api, a, "reading \"" + path + "\""));
  } else {
    struct archive_entry* e = nullptr;
    for (;;) {
      int rc = api->read_next_header(a, &e);
      if (rc == ARCHIVE_EOF) break;
      if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
        st = fail(dl::archive_error(*api, a, "reading \"" + path + "\""));
        break;
      }
      int64_t header_pos = api->read_header_position(a);
      bool regular = (api->entry_filetype(e) & AE_IFMT) == AE_IFREG && api->entry_hardlink(e) == nullptr;
      const char* raw = api->entry_pathname(e);
      std::string name = raw ? raw : "";
      while (name.rfind("./", 0) == 0) name.erase(0, 2);
      order.emplace_back(regular ? name : std::string(), header_pos);
      if (!regular || name.empty()) continue;
      int64_t size = api->entry_size(e);
      if (s->entries_.size() > 100000) {
        st = bad("\"" + path + "\": too many entries for an image archive");
        break;
      }
      Entry& ent = s->entries_[name];
      ent.size = size;
      bool keep = size >= 0 && static_cast<size_t>(size) <= kSmallEntry &&
                  (name.find('/') == std::string::npos ||
                   (name.size() >= 5 && name.compare(name.size() - 5, 5, ".json") == 0) || name.rfind("blobs/", 0) == 0);
      size_t want = keep ? static_cast<size_t>(size) : static_cast<size_t>(std::min<int64_t>(size, 512));
      std::string data(want, '\0');
      la_ssize_t got = want ? api->read_data(a, data.data(), data.size()) : 0;
      if (got != static_cast<la_ssize_t>(want)) {
        st = fail(dl::archive_error(*api, a, "reading \"" + name + "\" in \"" + path + "\""));
        break;
      }
      ent.head = data.substr(0, 512);
      if (keep) s->small_[name] = std::move(data);
    }
  }
  bool plain = st && api->filter_code(a, 0) == ARCHIVE_FILTER_NONE;
  api->read_free(a);
  if (!st) return fail(std::move(st).error());
  // In an uncompressed tar an entry's data ends, padded to 512 bytes, where the next header
  // starts. The offset found that way is used only if the bytes there are the entry's own.
  for (size_t i = 0; plain && i + 1 < order.size(); ++i) {
    if (order[i].first.empty()) continue;
    Entry& ent = s->entries_[order[i].first];
    int64_t start = order[i + 1].second - ((ent.size + 511) / 512) * 512;
    if (start < 0 || ent.size < 512) continue;
    std::string check(ent.head.size(), '\0');
    if (::pread(fd->get(), check.data(), check.size(), start) == static_cast<ssize_t>(check.size()) && check == ent.head)
      ent.offset = start;
  }
  return s;
}

bool TarSource::readable_in_place(const std::string& name) const {
  auto it = entries_.find(name);
  return it != entries_.end() && it->second.offset >= 0 && layer_media_type(it->second.head) == media::kOciLayer;
}

const std::string* TarSource::small(const std::string& name) const {
  auto it = small_.find(name);
  return it == small_.end() ? nullptr : &it->second;
}

Status TarSource::stage(const std::set<std::string>& names) {
  std::set<std::string> todo;
  for (const auto& n : names)
    if (!staged_.count(n)) todo.insert(n);
  if (todo.empty()) return {};
  for (const auto& n : todo)
    if (!entries_.count(n)) return bad("\"" + path_ + "\" has no entry \"" + n + "\"");
  if (!staging_) {
    KERN_TRY_ASSIGN(Staging s, store_->begin_staging());
    staging_.emplace(std::move(s));
  }
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  KERN_TRY_ASSIGN(UniqueFd fd, regular_only(sys::open_at(AT_FDCWD, path_, kSourceOpen), path_));
  struct archive* a = api->read_new();
  api->read_support_format_tar(a);
  api->read_support_filter_gzip(a);
  api->read_support_filter_zstd(a);
  api->read_support_filter_xz(a);
  api->read_support_filter_none(a);
  Status st;
  if (api->read_open_fd(a, fd.get(), 1 << 20) != ARCHIVE_OK) st = fail(dl::archive_error(*api, a, "reading \"" + path_ + "\""));
  struct archive_entry* e = nullptr;
  while (st && !todo.empty()) {
    int rc = api->read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      st = fail(dl::archive_error(*api, a, "reading \"" + path_ + "\""));
      break;
    }
    const char* raw = api->entry_pathname(e);
    std::string name = raw ? raw : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (!todo.count(name) || (api->entry_filetype(e) & AE_IFMT) != AE_IFREG) continue;
    Staged sg;
    sg.file = "entry-" + std::to_string(staged_.size());
    auto out = staging_->create(sg.file, O_WRONLY);
    if (!out) {
      st = fail(std::move(out).error());
      break;
    }
    auto hash = Sha256::create();
    if (!hash) {
      st = fail(std::move(hash).error());
      break;
    }
    for (;;) {
      const void* buf = nullptr;
      size_t len = 0;
      la_int64_t off = 0;
      int r = api->read_data_block(a, &buf, &len, &off);
      if (r == ARCHIVE_EOF) break;
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
        st = fail(dl::archive_error(*api, a, "reading \"" + name + "\""));
        break;
      }
      if (sg.magic.size() < 4) sg.magic.append(static_cast<const char*>(buf), std::min<size_t>(len, 4 - sg.magic.size()));
      hash->update(buf, len);
      Status w =
          sys::write_all(out->get(), std::string_view(static_cast<const char*>(buf), len), staging_->file(sg.file));
      if (!w) {
        st = std::move(w);
        break;
      }
    }
    if (!st) break;
    sg.digest = hash->finish();
    if (name.rfind("blobs/sha256/", 0) == 0 && sg.digest != "sha256:" + name.substr(13)) {
      st = bad("\"" + path_ + "\": blob \"" + name + "\" has digest " + sg.digest);
      break;
    }
    by_digest_[sg.digest] = name;
    staged_[name] = std::move(sg);
    todo.erase(name);
  }
  api->read_free(a);
  if (st && !todo.empty()) st = bad("\"" + path_ + "\" ended before \"" + *todo.begin() + "\"");
  return st;
}

std::optional<std::string> TarSource::staged_digest(const std::string& name) const {
  auto it = staged_.find(name);
  if (it == staged_.end()) return std::nullopt;
  return it->second.digest;
}

std::string TarSource::staged_media_type(const std::string& name) const {
  auto it = staged_.find(name);
  return layer_media_type(it == staged_.end() ? std::string() : it->second.magic);
}

Result<std::string> TarSource::read_blob(const Descriptor& d, size_t limit) {
  // An OCI archive names blobs by digest; a docker archive names its config in manifest.json.
  auto known = known_.find(d.digest);
  for (const std::string& name : {known == known_.end() ? std::string() : known->second, blob_name(d.digest)}) {
    if (const std::string* s = small(name)) {
      if (s->size() > limit) return bad("blob " + d.digest + " is too large");
      return *s;
    }
  }
  return bad("\"" + path_ + "\" has no blob " + d.digest);
}

Result<LayerInput> TarSource::open_layer(const Descriptor& d, const Staging&, size_t) {
  auto direct = in_place_.find(d.digest);
  if (direct != in_place_.end()) {
    const Entry& ent = entries_.at(direct->second);
    LayerInput in;
    KERN_TRY_ASSIGN(in.fd, regular_only(sys::open_at(AT_FDCWD, path_, kSourceOpen), path_));
    if (::lseek(in.fd.get(), ent.offset, SEEK_SET) != ent.offset) return fail_errno("lseek \"" + path_ + "\"", ErrorKind::image);
    in.length = ent.size;
    return in;
  }
  auto it = by_digest_.find(d.digest);
  if (it == by_digest_.end()) {
    KERN_TRY(stage({blob_name(d.digest)}));
    it = by_digest_.find(d.digest);
    if (it == by_digest_.end()) return bad("\"" + path_ + "\" has no layer " + d.digest);
  }
  const Staged& sg = staged_.at(it->second);
  LayerInput in;
  KERN_TRY_ASSIGN(in.fd, sys::open_at(staging_->fd(), sg.file, O_RDONLY));
  in.staged_dirfd = staging_->fd();
  in.staged_name = sg.file;
  return in;
}

// ---- turning indexes and docker manifests into import inputs ----

Result<std::vector<ImportInput>> layout_inputs(
    BlobSource& src, std::string_view index_json, const std::string& tag, bool all,
    const std::function<std::vector<std::string>(const Descriptor&)>& name_for) {
  KERN_TRY_ASSIGN(Index idx, parse_index(index_json));
  std::vector<const Descriptor*> picked;
  std::string tags;
  for (const auto& d : idx.manifests) {
    if (!d.ref_name.empty()) tags += (tags.empty() ? "" : ", ") + d.ref_name;
    if (all || (!tag.empty() && d.ref_name == tag)) picked.push_back(&d);
  }
  if (!all && tag.empty()) {
    if (idx.manifests.size() == 1) {
      picked.push_back(&idx.manifests[0]);
    } else {
      for (const auto& d : idx.manifests)
        if (d.ref_name == "latest") picked.push_back(&d);
    }
  }
  if (picked.empty())
    return bad(tag.empty() ? "the layout holds several images; name one with oci:DIR:TAG (tags: " + tags + ")"
                           : "the layout has no image tagged \"" + tag + "\" (tags: " + tags + ")");
  std::vector<ImportInput> out;
  for (const Descriptor* d : picked) {
    KERN_TRY_ASSIGN(ImportInput in, resolve_entry(src, *d));
    if (name_for) in.names = name_for(*d);
    out.push_back(std::move(in));
  }
  return out;
}

std::set<std::string> layout_layer_entries(const std::vector<ImportInput>& inputs) {
  std::set<std::string> out;
  for (const auto& in : inputs) {
    auto m = parse_manifest(in.manifest);
    if (!m) continue;
    for (const auto& l : m->layers) out.insert(blob_name(l.digest));
  }
  return out;
}

Result<std::vector<ImportInput>> docker_archive_inputs(TarSource& src, bool use_repo_tags) {
  const std::string* text = src.small("manifest.json");
  if (text == nullptr) return bad("not a docker-archive: no manifest.json");
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty()) return bad("docker-archive manifest.json is not a list of images");
  // Uncompressed layers are named in the manifest by their diff_id and read in place (the
  // importer verifies the digest while unpacking); the others are copied out first and hashed.
  std::set<std::string> to_stage;
  std::vector<std::vector<std::string>> layer_digests;
  for (const auto& img : j) {
    if (!img.is_object() || !img.contains("Layers") || !img["Layers"].is_array() || !img.contains("Config") ||
        !img["Config"].is_string())
      return bad("docker-archive manifest.json: an entry lacks Config or Layers");
    const std::string* cfg = src.small(img["Config"].get<std::string>());
    if (cfg == nullptr) return bad("docker-archive: no config \"" + img["Config"].get<std::string>() + "\"");
    KERN_TRY_ASSIGN(ParsedConfig pc, parse_image_config(*cfg));
    std::vector<std::string> digests;
    size_t i = 0;
    for (const auto& l : img["Layers"]) {
      if (!l.is_string()) return bad("docker-archive manifest.json: a layer is not a string");
      std::string name = l.get<std::string>();
      if (pc.diff_ids.size() == img["Layers"].size() && src.readable_in_place(name)) {
        digests.push_back(pc.diff_ids[i]);
        src.map_in_place(pc.diff_ids[i], name);
      } else {
        digests.emplace_back();
        to_stage.insert(name);
      }
      ++i;
    }
    layer_digests.push_back(std::move(digests));
  }
  KERN_TRY(src.stage(to_stage));
  std::vector<ImportInput> out;
  size_t n = 0;
  for (const auto& img : j) {
    std::string cfg_name = img["Config"].get<std::string>();
    const std::string* cfg = src.small(cfg_name);
    KERN_TRY_ASSIGN(std::string cfg_digest, sha256_of(*cfg));
    src.add_known_blob(cfg_digest, cfg_name);
    nlohmann::ordered_json m;
    m["schemaVersion"] = 2;
    m["mediaType"] = media::kOciManifest;
    m["config"] = {{"mediaType", media::kOciConfig}, {"digest", cfg_digest}, {"size", cfg->size()}};
    m["layers"] = nlohmann::ordered_json::array();
    size_t i = 0;
    for (const auto& l : img["Layers"]) {
      std::string name = l.get<std::string>();
      const std::string& direct = layer_digests[n][i++];
      if (!direct.empty()) {
        m["layers"].push_back({{"mediaType", media::kOciLayer}, {"digest", direct}});
      } else {
        m["layers"].push_back({{"mediaType", src.staged_media_type(name)}, {"digest", *src.staged_digest(name)}});
      }
    }
    ++n;
    ImportInput in;
    in.manifest = m.dump();
    KERN_TRY_ASSIGN(in.manifest_digest, sha256_of(in.manifest));
    in.manifest_media_type = media::kOciManifest;
    if (use_repo_tags && img.contains("RepoTags") && img["RepoTags"].is_array()) {
      for (const auto& t : img["RepoTags"]) {
        if (!t.is_string()) continue;
        auto ref = parse_reference(t.get<std::string>());
        if (ref && ref->kind == Reference::Kind::registry) in.names.push_back(ref->str());
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace kern::oci
