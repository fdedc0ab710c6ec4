// Reading layer archives into a TreeWriter; see layer_unpack.h.
#include "oci/layer_unpack.h"

#include <algorithm>

namespace kern::oci {
namespace {

class ArchiveEntryData final : public EntryData {
 public:
  ArchiveEntryData(const dl::ArchiveApi& api, struct archive* a, int64_t size) : api_(api), a_(a), size_(size) {}
  Result<bool> next(const void** buf, size_t* len, int64_t* offset) override {
    la_int64_t off = 0;
    int rc = api_.read_data_block(a_, buf, len, &off);
    if (rc == ARCHIVE_EOF) return false;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      // umoci 0.4.7's insert ends a layer right after its last file's data: no padding to 512
      // bytes, no end blocks. Go's tar reader (podman, Docker, containerd) takes that as the
      // end of the archive; so does kern, once every byte the header declared has arrived.
      // A stream cut anywhere else is still refused, and the layer's digest is checked anyway.
      if (size_ > 0 && delivered_ == size_) {
        ended_unpadded_ = true;
        return false;
      }
      return fail(dl::archive_error(api_, a_, "reading entry data"));
    }
    *offset = off;
    delivered_ = std::max<int64_t>(delivered_, off + static_cast<int64_t>(*len));
    return true;
  }
  // The stream ended inside this entry's padding: it was the last entry.
  bool ended_unpadded() const { return ended_unpadded_; }

 private:
  const dl::ArchiveApi& api_;
  struct archive* a_;
  int64_t size_;
  int64_t delivered_ = 0;
  bool ended_unpadded_ = false;
};

}  // namespace

Status unpack_tar(const dl::ArchiveApi& api, struct archive* a, TreeWriter& w,
                  std::vector<TreeWriter::WrittenFile>* files) {
  w.begin_layer();
  EntryInfo info;
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = api.read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return fail(dl::archive_error(api, a, "reading layer"));
    const char* name = api.entry_pathname(e);
    if (name == nullptr) return fail(ErrorKind::image, 0, "layer entry without a name");
    info.name = name;
    info.file_type = api.entry_filetype(e);
    info.mode = api.entry_mode(e) & 07777;
    info.uid = api.entry_uid(e);
    info.gid = api.entry_gid(e);
    info.size = api.entry_size_is_set(e) ? api.entry_size(e) : 0;
    info.mtime_set = api.entry_mtime_is_set(e) != 0;
    info.mtime.tv_sec = api.entry_mtime(e);
    info.mtime.tv_nsec = api.entry_mtime_nsec(e);
    info.symlink = api.entry_symlink(e);
    info.hardlink = api.entry_hardlink(e);
    info.xattr_names.clear();
    if (api.entry_xattr_reset(e) > 0) {
      const char* xname = nullptr;
      const void* value = nullptr;
      size_t size = 0;
      while (api.entry_xattr_next(e, &xname, &value, &size) == ARCHIVE_OK)
        if (xname) info.xattr_names.emplace_back(xname);
    }
    ArchiveEntryData data(api, a, static_cast<int64_t>(info.size));
    KERN_TRY(w.add(info, data));
    if (files) files->push_back(w.last_file());
    if (data.ended_unpadded()) break;
  }
  return {};
}

Result<LayerPipeResult> unpack_layer(TreeWriter& w, const LayerPipeOptions& opts,
                                     std::vector<TreeWriter::WrittenFile>* files) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  KERN_TRY_ASSIGN(std::unique_ptr<LayerPipe> pipe, LayerPipe::start(opts));
  Status st = unpack_tar(*api, pipe->tar(), w, files);
  if (!st) {
    // A read error inside the pipe is the better explanation than libarchive's "truncated".
    auto r = pipe->finish(true);
    if (!r && r.error().sys_errno() != ECANCELED) return fail(std::move(r).error().with_context("reading layer"));
    return fail(std::move(st).error());
  }
  return pipe->finish();
}

Status unpack_layer_memory(TreeWriter& w, const void* data, size_t size) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  struct archive* a = api->read_new();
  if (a == nullptr) return fail(ErrorKind::internal, ENOMEM, "archive_read_new");
  api->read_support_filter_gzip(a);
  api->read_support_filter_zstd(a);
  api->read_support_filter_xz(a);
  api->read_support_filter_none(a);
  api->read_support_format_tar(a);
  Status st;
  if (api->read_open_memory(a, data, size) != ARCHIVE_OK)
    st = fail(dl::archive_error(*api, a, "reading layer"));
  else
    st = unpack_tar(*api, a, w);
  api->read_free(a);
  return st;
}

}  // namespace kern::oci
