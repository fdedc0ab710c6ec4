// The two-thread decompression pipeline; see layer_pipe.h.
#include "oci/layer_pipe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/sys/fdio.h"

namespace kern::oci {
namespace {
// Small buffers, not zero-filled: every fresh page costs a fault, about 1 ms per MiB on a VM
// (as much as sha256 of a MiB), and 8 x 1 MiB zero-filled per layer cost 12 ms of a two-layer
// load's 285 ms on the unpacking thread. Reading further ahead does not pay for its pages: the
// slower side (sha256 for a large file, the writes for many small ones) sets the pace.
constexpr size_t kChunk = 256 << 10;
constexpr size_t kChunks = 8;
}  // namespace

LayerPipe::LayerPipe(const dl::ArchiveApi* api, const LayerPipeOptions& opts)
    : api_(api), opts_(opts), remaining_(opts.length) {
  for (size_t i = 0; i < kChunks; ++i) {
    auto c = std::make_unique<Chunk>();
    c->data = std::make_unique_for_overwrite<char[]>(kChunk);
    free_.push_back(std::move(c));
  }
}

Result<std::unique_ptr<LayerPipe>> LayerPipe::start(const LayerPipeOptions& opts) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  std::unique_ptr<LayerPipe> p(new LayerPipe(api, opts));
  if (opts.hash_input) {
    KERN_TRY_ASSIGN(Sha256 h, Sha256::create());
    p->in_hash_.emplace(std::move(h));
  }
  if (opts.hash_output) {
    KERN_TRY_ASSIGN(Sha256 h, Sha256::create());
    p->out_hash_.emplace(std::move(h));
  }
  p->tar_ = api->read_new();
  if (p->tar_ == nullptr) return fail(ErrorKind::internal, ENOMEM, "archive_read_new");
  if (!opts.progress_id.empty() && (p->progress_ = progress::current()) != nullptr) {
    struct stat st;
    off_t at = ::lseek(opts.fd, 0, SEEK_CUR);
    int64_t total = opts.length >= 0 ? opts.length
                    : (::fstat(opts.fd, &st) == 0 && S_ISREG(st.st_mode) && at >= 0) ? st.st_size - at : -1;
    p->progress_->start(opts.progress_id, "unpacking", total, true);
  }
  api->read_support_format_tar(p->tar_);
  api->read_support_filter_none(p->tar_);
  p->thread_ = std::thread([raw = p.get()] { raw->produce(); });
  if (api->read_open(p->tar_, p.get(), nullptr, &LayerPipe::tar_read, nullptr) != ARCHIVE_OK) {
    Error e = dl::archive_error(*api, p->tar_, "reading layer");
    (void)p->finish(true);
    if (p->error_) return fail(Error(*p->error_));
    return fail(std::move(e));
  }
  return p;
}

LayerPipe::~LayerPipe() {
  if (thread_.joinable()) (void)finish(true);
  if (tar_) api_->read_free(tar_);
}

la_ssize_t LayerPipe::raw_read(struct archive*, void* self, const void** buf) {
  auto* p = static_cast<LayerPipe*>(self);
  if (!p->in_buf_) p->in_buf_ = std::make_unique_for_overwrite<char[]>(kChunk);
  for (;;) {
    size_t want = kChunk;
    if (p->remaining_ >= 0) want = static_cast<size_t>(std::min<int64_t>(p->remaining_, static_cast<int64_t>(want)));
    if (want == 0) return 0;
    ssize_t n = ::read(p->opts_.fd, p->in_buf_.get(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      p->read_error_ = Error(ErrorKind::image, errno, "read (layer blob)");
      return -1;
    }
    if (n > 0) {
      if (p->in_hash_) p->in_hash_->update(p->in_buf_.get(), static_cast<size_t>(n));
      if (p->opts_.tee_fd >= 0) {
        Status st = sys::write_all(p->opts_.tee_fd, std::string_view(p->in_buf_.get(), n), "blob copy");
        if (!st) {
          p->read_error_ = std::move(st).error();
          return -1;
        }
      }
      p->result_.input_bytes += static_cast<uint64_t>(n);
      if (p->progress_) p->progress_->update(p->opts_.progress_id, static_cast<int64_t>(p->result_.input_bytes));
      if (p->remaining_ >= 0) p->remaining_ -= n;
    } else if (p->remaining_ > 0) {
      p->read_error_ = Error(ErrorKind::image, EIO, "layer blob ends early");
      return -1;
    }
    *buf = p->in_buf_.get();
    return n;
  }
}

std::unique_ptr<LayerPipe::Chunk> LayerPipe::take_free_chunk() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return cancel_ || !free_.empty(); });
  if (cancel_) return nullptr;
  std::unique_ptr<Chunk> c = std::move(free_.back());
  free_.pop_back();
  return c;
}

bool LayerPipe::plain_tar_input() const {
  // Decided without consuming anything: a pipe (no pread) takes the general path.
  off_t at = ::lseek(opts_.fd, 0, SEEK_CUR);
  if (at < 0) return false;
  unsigned char m[6] = {};
  ssize_t n = ::pread(opts_.fd, m, sizeof m, at);
  if (n < static_cast<ssize_t>(sizeof m)) return false;
  bool gzip = m[0] == 0x1f && m[1] == 0x8b;
  bool zstd = m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd;
  bool xz = m[0] == 0xfd && m[1] == '7' && m[2] == 'z' && m[3] == 'X' && m[4] == 'Z' && m[5] == 0;
  bool bzip2 = m[0] == 'B' && m[1] == 'Z' && m[2] == 'h';
  return !(gzip || zstd || xz || bzip2);
}

void LayerPipe::produce_plain() {
  // An uncompressed blob is its own tar: read straight into the chunks the tar reader takes,
  // hashing (blob digest and diff_id at once) and copying to the store on the way, with no
  // decompressor pass and no second copy of every byte.
  auto finish_with = [&](std::optional<Error> err) {
    std::lock_guard<std::mutex> lk(mu_);
    if (err && !error_) error_ = std::move(err);
    done_ = true;
    cv_.notify_all();
  };
  // The diff_id of an uncompressed blob is its digest: one hash serves both.
  Sha256* hash = in_hash_ ? &*in_hash_ : out_hash_ ? &*out_hash_ : nullptr;
  for (;;) {
    std::unique_ptr<Chunk> c = take_free_chunk();
    if (!c) return finish_with(std::nullopt);
    size_t want = kChunk;
    if (remaining_ >= 0) want = static_cast<size_t>(std::min<int64_t>(remaining_, static_cast<int64_t>(want)));
    ssize_t n = 0;
    if (want > 0) {
      do n = ::read(opts_.fd, c->data.get(), want);
      while (n < 0 && errno == EINTR);
    }
    if (n < 0) return finish_with(Error(ErrorKind::image, errno, "read (layer blob)"));
    if (n == 0) {
      if (remaining_ > 0) return finish_with(Error(ErrorKind::image, EIO, "layer blob ends early"));
      std::lock_guard<std::mutex> lk(mu_);
      free_.push_back(std::move(c));
      break;
    }
    if (hash) hash->update(c->data.get(), static_cast<size_t>(n));
    if (opts_.split) opts_.split->feed(c->data.get(), static_cast<size_t>(n));
    if (opts_.tee_fd >= 0) {
      Status st = sys::write_all(opts_.tee_fd, std::string_view(c->data.get(), static_cast<size_t>(n)), "blob copy");
      if (!st) return finish_with(std::move(st).error());
    }
    result_.input_bytes += static_cast<uint64_t>(n);
    result_.output_bytes += static_cast<uint64_t>(n);
    if (progress_) progress_->update(opts_.progress_id, static_cast<int64_t>(result_.input_bytes));
    if (remaining_ >= 0) remaining_ -= n;
    c->len = static_cast<size_t>(n);
    std::lock_guard<std::mutex> lk(mu_);
    full_.push_back(std::move(c));
    cv_.notify_all();
  }
  std::string digest = hash ? hash->finish() : std::string();
  if (in_hash_) result_.input_digest = digest;
  if (out_hash_) result_.output_digest = digest;
  finish_with(std::nullopt);
}

void LayerPipe::produce() {
  if (plain_tar_input()) return produce_plain();
  struct archive* raw = api_->read_new();
  auto finish_with = [&](std::optional<Error> err) {
    if (raw) api_->read_free(raw);
    std::lock_guard<std::mutex> lk(mu_);
    if (err && !error_) error_ = std::move(err);
    done_ = true;
    cv_.notify_all();
  };
  if (raw == nullptr) return finish_with(Error(ErrorKind::internal, ENOMEM, "archive_read_new"));
  api_->read_support_filter_gzip(raw);
  api_->read_support_filter_zstd(raw);
  api_->read_support_filter_xz(raw);
  api_->read_support_filter_none(raw);
  api_->read_support_format_raw(raw);
  struct archive_entry* entry = nullptr;
  if (api_->read_open(raw, this, nullptr, &LayerPipe::raw_read, nullptr) != ARCHIVE_OK ||
      api_->read_next_header(raw, &entry) != ARCHIVE_OK)
    return finish_with(read_error_ ? std::move(*read_error_) : dl::archive_error(*api_, raw, "decompressing layer"));
  // An uncompressed blob is its own diff_id: hash it once.
  bool same_digest = in_hash_ && out_hash_ && api_->filter_code(raw, 0) == ARCHIVE_FILTER_NONE;
  if (same_digest) out_hash_.reset();
  for (;;) {
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t off = 0;
    int rc = api_->read_data_block(raw, &block, &size, &off);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      return finish_with(read_error_ ? std::move(*read_error_) : dl::archive_error(*api_, raw, "decompressing layer"));
    if (out_hash_) out_hash_->update(block, size);
    if (opts_.split) opts_.split->feed(block, size);
    result_.output_bytes += size;
    const char* src = static_cast<const char*>(block);
    while (size > 0) {
      std::unique_ptr<Chunk> c = take_free_chunk();
      if (!c) return finish_with(std::nullopt);
      size_t n = std::min(size, kChunk);
      std::memcpy(c->data.get(), src, n);
      c->len = n;
      src += n;
      size -= n;
      std::lock_guard<std::mutex> lk(mu_);
      full_.push_back(std::move(c));
      cv_.notify_all();
    }
  }
  // Drain the rest of the raw input so that the digest covers every byte of the blob (a tar
  // ends with zero blocks libarchive may not need, and garbage after them is still hashed).
  const void* rest = nullptr;
  while (raw_read(raw, this, &rest) > 0) {
  }
  if (read_error_) return finish_with(std::move(*read_error_));
  if (in_hash_) result_.input_digest = in_hash_->finish();
  if (out_hash_) result_.output_digest = out_hash_->finish();
  if (same_digest) result_.output_digest = result_.input_digest;
  finish_with(std::nullopt);
}

la_ssize_t LayerPipe::tar_read(struct archive*, void* self, const void** buf) {
  auto* p = static_cast<LayerPipe*>(self);
  std::unique_lock<std::mutex> lk(p->mu_);
  if (p->current_) {
    p->free_.push_back(std::move(p->current_));
    p->cv_.notify_all();
  }
  p->cv_.wait(lk, [&] { return !p->full_.empty() || p->done_; });
  if (p->full_.empty()) return p->error_ ? -1 : 0;
  p->current_ = std::move(p->full_.front());
  p->full_.pop_front();
  *buf = p->current_->data.get();
  return static_cast<la_ssize_t>(p->current_->len);
}

Result<LayerPipeResult> LayerPipe::finish(bool cancel) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (cancel) cancel_ = true;
    cv_.notify_all();
  }
  if (!cancel) {
    // The tar reader may stop at the end-of-archive blocks; consume what the producer still
    // sends so that it can hash the whole blob.
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return !full_.empty() || done_; });
      if (full_.empty()) break;
      free_.push_back(std::move(full_.front()));
      full_.pop_front();
      cv_.notify_all();
    }
  }
  if (thread_.joinable()) thread_.join();
  if (error_) return fail(Error(*error_));
  if (cancel) return fail(ErrorKind::image, ECANCELED, "layer unpack cancelled");
  if (progress_) progress_->finish(opts_.progress_id);
  return result_;
}

}  // namespace kern::oci
