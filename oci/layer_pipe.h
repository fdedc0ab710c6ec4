// A decompression pipeline for one layer blob: a producer thread reads the blob from an fd,
// hashes the bytes as read (the blob digest), optionally copies them to a second fd (the store's
// copy), decompresses them (gzip, zstd, xz or none, detected by libarchive) and optionally
// hashes the result (the diff_id); the caller's thread parses the tar and writes files.
// Inflating and writing files then use both cores, as `tar -xzf` does with its gzip child.
// Any process, before clone.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "oci/digest.h"
#include "oci/dl/archive_api.h"
#include "oci/progress.h"
#include "oci/layer_split.h"
#include "runtime/sys/error.h"

namespace kern::oci {

struct LayerPipeOptions {
  int fd = -1;                  // the blob, read from its current offset to EOF...
  int64_t length = -1;          // ...or this many bytes (a blob inside a larger file)
  int tee_fd = -1;              // where to copy the raw blob bytes, or -1
  bool hash_input = true;       // the digest of the raw bytes
  bool hash_output = false;     // the digest of the decompressed tar (diff_id)
  std::string progress_id;      // non-empty: bytes read are told to oci/progress.h's observer
  TarSplitter* split = nullptr; // fed the decompressed bytes on the producer thread, or null
};

struct LayerPipeResult {
  std::string input_digest;   // "sha256:..." or empty
  std::string output_digest;  // "sha256:..." or empty
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
};

class LayerPipe {
 public:
  static Result<std::unique_ptr<LayerPipe>> start(const LayerPipeOptions& opts);
  ~LayerPipe();

  // A libarchive reader (tar format only) over the decompressed stream, opened.
  struct archive* tar() { return tar_; }
  // Waits for the producer. Call after the tar was read to its end (or to cancel early, after
  // an error: the producer is stopped and its result dropped).
  Result<LayerPipeResult> finish(bool cancel = false);

 private:
  explicit LayerPipe(const dl::ArchiveApi* api, const LayerPipeOptions& opts);
  void produce();
  bool plain_tar_input() const;
  void produce_plain();
  static la_ssize_t raw_read(struct archive*, void* self, const void** buf);
  static la_ssize_t tar_read(struct archive*, void* self, const void** buf);

  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t len = 0;
  };
  // The next empty chunk for the producer; null once the pipe is cancelled.
  std::unique_ptr<Chunk> take_free_chunk();

  const dl::ArchiveApi* api_;
  LayerPipeOptions opts_;
  std::optional<Sha256> in_hash_, out_hash_;
  std::unique_ptr<char[]> in_buf_;  // compressed input, allocated when first read
  int64_t remaining_ = -1;  // bytes left to read when opts_.length is set
  progress::Observer* progress_ = nullptr;
  LayerPipeResult result_;
  std::optional<Error> read_error_;  // producer thread only
  std::optional<Error> error_;       // under mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Chunk>> free_;
  std::deque<std::unique_ptr<Chunk>> full_;
  std::unique_ptr<Chunk> current_;  // the chunk the tar reader is using
  bool done_ = false;               // producer finished (ok or error)
  bool cancel_ = false;
  std::thread thread_;
  struct archive* tar_ = nullptr;
};

}  // namespace kern::oci
