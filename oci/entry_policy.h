// The unpacker's per-entry decisions, kept pure so that every attack shape is a unit test:
// which names are acceptable (and their clean form), which entry types are written, skipped or
// refused, what the mode bits become, what a whiteout names, and the size/count bounds.
// Any process; no I/O.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::oci {

struct UnpackLimits {
  uint64_t max_entries = 2'000'000;            // per image, all layers together
  uint64_t max_total_bytes = 64ull << 30;      // file data per image, all layers together
  size_t max_name = 4095;                      // a whole path (PATH_MAX - 1)
  size_t max_component = 255;                  // one path component (NAME_MAX)
  size_t max_depth = 512;                      // path components
};

// A clean relative name: no leading "/" or "./", no "." or empty components, never "..".
// "" is the layer root itself.
struct CleanName {
  std::string path;    // "usr/bin/sh"
  std::string parent;  // "usr/bin" ("" for a top-level entry)
  std::string leaf;    // "sh" ("" for the root)
};

// Cleans a name from a tar header. Absolute names are made relative ("/etc/x" -> "etc/x"); a
// ".." component anywhere is refused (no clamping: a layer that says ".." is malformed or
// hostile); a name or component past the limits is refused. ErrorKind::image.
Result<CleanName> clean_entry_name(std::string_view raw, const UnpackLimits& limits);

enum class EntryKind {
  directory,
  regular,
  symlink,
  hardlink,
  whiteout,         // ".wh.NAME": hide NAME of the lower layers
  opaque,           // ".wh..wh..opq": hide everything of the lower layers in this directory
  skip_whiteout_meta,  // other ".wh..wh.*" (aufs bookkeeping): ignored
  skip_device,      // character or block device: a rootless user cannot make one, and a box
                    // must not get one from an image
  skip_fifo,
  skip_socket,
};

// Classifies an entry from its libarchive file type (AE_IF* values, the S_IF* values) and
// whether it names a hardlink target. An unknown type is refused (fail closed).
Result<EntryKind> classify_entry(const CleanName& name, unsigned file_type, bool has_hardlink);

// For a whiteout, the name it hides ("a/.wh.b" -> "b"). ".", ".." and "" are refused.
Result<std::string> whiteout_target(const CleanName& name);

// Permission bits to create with: setuid and setgid are cleared (a rootless unpack must not
// produce set-id files; the box cannot honour them anyway), the sticky bit is kept.
inline mode_t sanitize_mode(mode_t mode) { return mode & 01777; }

// Whether the entry's ownership or mode is something a single-uid rootless unpack cannot
// reproduce and must record instead.
inline bool needs_ownership_record(int64_t uid, int64_t gid, mode_t mode) {
  return uid != 0 || gid != 0 || (mode & 06000) != 0;
}

}  // namespace kern::oci
