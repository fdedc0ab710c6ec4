// One layer's tar, hashed as written; see layer_tar.h.
#include "oci/layer_tar.h"

#include <unistd.h>

#include <cerrno>
#include <vector>

#include "oci/digest.h"
#include "oci/dl/archive_api.h"
#include "runtime/sys/fdio.h"

namespace kern::oci {

struct LayerTar::State {
  const dl::ArchiveApi* api = nullptr;
  struct archive* out = nullptr;
  struct archive_entry* entry = nullptr;
  int fd = -1;
  std::optional<int64_t> clamp;
  std::optional<Sha256> hash;
  uint64_t written = 0;
  int write_errno = 0;
  size_t entries = 0;

  ~State() {
    if (entry) api->entry_free(entry);
    if (out) api->write_free(out);
  }
};

namespace {

la_ssize_t write_cb(struct archive*, void* data, const void* buf, size_t len) {
  auto* s = static_cast<LayerTar::State*>(data);
  if (sys::write_all_raw(s->fd, buf, len) != 0) {
    s->write_errno = errno;
    return -1;
  }
  s->hash->update(buf, len);
  s->written += len;
  return static_cast<la_ssize_t>(len);
}

}  // namespace

LayerTar::LayerTar(std::unique_ptr<State> s) : s_(std::move(s)) {}
LayerTar::LayerTar(LayerTar&&) noexcept = default;
LayerTar& LayerTar::operator=(LayerTar&&) noexcept = default;
LayerTar::~LayerTar() = default;

Result<LayerTar> LayerTar::create(int out_fd, std::optional<int64_t> clamp_mtime) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  auto s = std::make_unique<State>();
  s->api = api;
  s->fd = out_fd;
  s->clamp = clamp_mtime;
  KERN_TRY_ASSIGN(Sha256 h, Sha256::create());
  s->hash.emplace(std::move(h));
  s->out = api->write_new();
  s->entry = api->entry_new();
  if (!s->out || !s->entry) return fail(ErrorKind::setup, ENOMEM, "archive_write_new");
  if (api->write_set_format_pax_restricted(s->out) != ARCHIVE_OK || api->write_add_filter_none(s->out) != ARCHIVE_OK ||
      api->write_set_bytes_in_last_block(s->out, 1) != ARCHIVE_OK ||
      api->write_open(s->out, s.get(), nullptr, write_cb, nullptr) != ARCHIVE_OK)
    return fail(dl::archive_error(*api, s->out, "starting a layer"));
  return LayerTar(std::move(s));
}

size_t LayerTar::entries() const { return s_->entries; }

Status LayerTar::header(const LayerEntryMeta& m, unsigned type, int64_t size, const std::string* link, bool hard) {
  const dl::ArchiveApi& api = *s_->api;
  api.entry_clear(s_->entry);
  api.entry_set_pathname(s_->entry, m.path.c_str());
  if (!hard) {
    api.entry_set_filetype(s_->entry, type);
    api.entry_set_perm(s_->entry, m.perm & 07777);
    api.entry_set_uid(s_->entry, m.uid);
    api.entry_set_gid(s_->entry, m.gid);
    int64_t t = m.mtime;
    if (s_->clamp && t > *s_->clamp) t = *s_->clamp;
    api.entry_set_mtime(s_->entry, t, 0);
    api.entry_set_size(s_->entry, size);
    if (link) api.entry_set_symlink(s_->entry, link->c_str());
  } else {
    api.entry_set_filetype(s_->entry, AE_IFREG);
    api.entry_set_perm(s_->entry, 0644);
    api.entry_set_hardlink(s_->entry, link->c_str());
    api.entry_set_size(s_->entry, 0);
  }
  if (api.write_header(s_->out, s_->entry) != ARCHIVE_OK) {
    Error e = dl::archive_error(api, s_->out, "writing the layer entry \"" + m.path + "\"");
    return fail(s_->write_errno ? Error(ErrorKind::setup, s_->write_errno, e.message()) : e);
  }
  ++s_->entries;
  return {};
}

Status LayerTar::dir(const LayerEntryMeta& m) { return header(m, AE_IFDIR, 0, nullptr, false); }

Status LayerTar::data(const LayerEntryMeta& m, std::string_view content) {
  KERN_TRY(header(m, AE_IFREG, static_cast<int64_t>(content.size()), nullptr, false));
  if (!content.empty() &&
      s_->api->write_data(s_->out, content.data(), content.size()) != static_cast<la_ssize_t>(content.size()))
    return fail(dl::archive_error(*s_->api, s_->out, "writing the layer entry \"" + m.path + "\""));
  return {};
}

Status LayerTar::file(const LayerEntryMeta& m, int fd, uint64_t size, const std::string& what) {
  KERN_TRY(header(m, AE_IFREG, static_cast<int64_t>(size), nullptr, false));
  std::vector<char> buf(size_t{1} << 17);
  uint64_t left = size;
  while (left > 0) {
    ssize_t n = ::read(fd, buf.data(), left < buf.size() ? left : buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read \"" + what + "\"", ErrorKind::setup);
    if (n == 0) return fail(ErrorKind::setup, EIO, "read \"" + what + "\": the file shrank while it was copied into a layer");
    if (s_->api->write_data(s_->out, buf.data(), static_cast<size_t>(n)) != n)
      return fail(dl::archive_error(*s_->api, s_->out, "writing the layer entry \"" + m.path + "\""));
    left -= static_cast<uint64_t>(n);
  }
  return {};
}

Status LayerTar::symlink(const LayerEntryMeta& m, const std::string& target) {
  LayerEntryMeta l = m;
  l.perm = 0777;
  return header(l, AE_IFLNK, 0, &target, false);
}

Status LayerTar::hardlink(const LayerEntryMeta& m, const std::string& target) {
  return header(m, AE_IFREG, 0, &target, true);
}

namespace {
std::string beside(const std::string& path, const std::string& name) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? name : path.substr(0, slash + 1) + name;
}
}  // namespace

Status LayerTar::whiteout(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  LayerEntryMeta m{beside(path, ".wh." + base), 0644, 0, 0, 0};
  return data(m, {});
}

Status LayerTar::opaque(const std::string& dir) {
  LayerEntryMeta m{dir.empty() ? ".wh..wh..opq" : dir + "/.wh..wh..opq", 0644, 0, 0, 0};
  return data(m, {});
}

Result<LayerDigest> LayerTar::finish() {
  if (s_->api->write_close(s_->out) != ARCHIVE_OK) {
    Error e = dl::archive_error(*s_->api, s_->out, "ending the layer");
    return fail(s_->write_errno ? Error(ErrorKind::setup, s_->write_errno, e.message()) : e);
  }
  return LayerDigest{s_->hash->finish(), s_->written};
}

}  // namespace kern::oci
