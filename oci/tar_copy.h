// kern cp's tar stream, through libarchive (oci/dl/archive_api.h): one side packs a tree into a
// GNU tar on a pipe, the other unpacks it where docker cp's table says (copy_paths.h). Either side
// may be a joiner of kern cp inside the box (runtime/box_copy.h) or kern itself on the host.
//
// In a box, nothing here may load code or configuration from the box's files: libarchive is
// loaded before the join (tar_copy_ready), the stream is GNU tar (names travel as bytes, no
// charset conversion, so no iconv module), ids stay numbers (no NSS lookup), and the box's side
// only ever reads a stream kern's host side wrote (retar_stream re-writes a caller's tar first).
// Writing to disk uses libarchive's SECURE_SYMLINKS, SECURE_NODOTDOT and SECURE_NOABSOLUTEPATHS,
// from a working directory that is the destination's directory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "oci/copy_paths.h"
#include "runtime/sys/error.h"

namespace kern::oci {

// Loads libarchive; on the host, before a joiner is cloned.
Status tar_copy_ready();

// An id through a user namespace's map (kern cp -a): a uid, or a gid, to the other side's;
// nullopt when the map has none.
using IdMap = std::function<std::optional<uint32_t>(uint32_t id, bool is_gid)>;

struct PackRequest {
  CopyPath src;
  bool follow = false;  // -L: a symlink SRC is copied as what it points to
  IdMap ids;            // when set, every entry's ids go through it
  std::string where;    // " in the box", or "" on the host: for the messages
};

// Writes SRC's tree to `fd`, its root named stream_root_name(SRC), SRC's own entry first:
// directories, files, symlinks (never followed below SRC), nodes and FIFOs; no xattrs, ACLs or
// file flags; two hard links to one file are two copies. Changes the working directory to SRC's
// parent. An error writing `fd` carries EPIPE when the reader has gone.
Status pack_tree(int fd, const PackRequest& r);

struct UnpackRequest {
  CopyPath dst;
  bool as_is = false;       // kern cp - NAME:DIR: the entries as they are, into the directory DST
  bool keep_owner = false;  // -a: the entries' ids; else the files are the writer's own
  IdMap ids;                // when set, every entry's ids go through it first
  // Asked once the stream has ended whole: whether the side that wrote it succeeded. False
  // undoes the copy.
  std::function<bool()> source_done;
  std::string where;  // " in the box", or ""
};

// Reads the stream on `fd` and writes its entries where they land; changes the working directory
// to that directory. On failure, what the copy created (the landed root, or each new name in a
// directory it copied into) is removed; a file it overwrote stays overwritten.
Status unpack_tree(int fd, const UnpackRequest& r);

// kern cp - NAME:DIR: the caller's tar on `in` (plain, gzip, xz or zstd; ustar, pax or GNU) written
// again to `out` as GNU tar, entry by entry.
Status retar_stream(int in, int out);

// kern cp NAME:SRC -: the box's stream on `in` copied to `out` as it comes.
Status relay_stream(int in, int out);

}  // namespace kern::oci
