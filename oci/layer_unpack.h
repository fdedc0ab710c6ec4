// Reading layer archives entry by entry into a TreeWriter: the libarchive half of the unpacker.
// Any process, before clone.
#pragma once

#include <cstddef>
#include <vector>

#include "oci/dl/archive_api.h"
#include "oci/layer_pipe.h"
#include "oci/tree_writer.h"
#include "runtime/sys/error.h"

namespace kern::oci {

// Feeds every entry of an open tar reader to `w` as one new layer. With `files`, what the writer
// wrote for each entry, in entry order (for layer recipes; the writer must be tracking).
Status unpack_tar(const dl::ArchiveApi& api, struct archive* a, TreeWriter& w,
                  std::vector<TreeWriter::WrittenFile>* files = nullptr);

// Unpacks the layer blob read from opts.fd (gzip, zstd, xz or plain tar) as the next layer of
// `w`, decompressing on a second thread. Returns the digests the options asked for; the caller
// compares them with what the manifest promised before making the tree visible.
Result<LayerPipeResult> unpack_layer(TreeWriter& w, const LayerPipeOptions& opts,
                                     std::vector<TreeWriter::WrittenFile>* files = nullptr);

// The same from memory, on one thread (the fuzz target and small tests).
Status unpack_layer_memory(TreeWriter& w, const void* data, size_t size);

}  // namespace kern::oci
