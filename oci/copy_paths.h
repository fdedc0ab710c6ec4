// The paths of `kern cp`, pure: docker cp's grammar of SRC and DST ("/." for a directory's
// contents, a trailing "/" for a directory), the lexical check of a path in a box, where a copied
// tree lands (docker cp's table), the renaming of the stream's entries to land there, and an id
// through a user namespace's map (kern cp -a).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/sys/error.h"

namespace kern::oci {

// SRC or DST, without the marks of docker cp's grammar.
struct CopyPath {
  std::string path;             // never empty; "/" and "." stay
  bool contents = false;        // it ended in "/." (or was "."): a directory's contents
  bool trailing_slash = false;  // it ended in "/": it must be a directory
};

// A path on the host: the marks taken off, the rest as given (relative to the caller's cwd).
CopyPath host_copy_path(const std::string& raw);

// A path in a box: relative to the box's "/" (as docker cp's), cleaned lexically ("." and ".."
// folded, slashes squeezed). A ".." that climbs above "/" is refused (kind usage), as is an
// empty path. The result is absolute.
Result<CopyPath> box_copy_path(const std::string& raw);

// "a/b" -> "a", "b" -> ".", "/b" -> "/", "/" -> "/".
std::string parent_of(const std::string& path);
// "a/b" -> "b", "/" -> "/".
std::string base_of(const std::string& path);

// The name the root of SRC's tree has in the stream: its base name, "." for its contents (and
// for "/", copied as its contents).
std::string stream_root_name(const CopyPath& src);

enum class DestState { missing, directory, other };

// Where the tree lands: the directory the entries are written in, and the name its root takes
// there ("." when the entries go straight into `dir`, the root being that directory).
struct Landing {
  std::string dir;
  std::string name;
};

// docker cp's table: into an existing directory under the source's name (its contents for
// SRC/.), over an existing file (a file only), or as DST itself when it does not exist (its
// parent must; a DST ending in "/" must then be a directory the source is). `state` is DST's,
// symlinks followed; `src_root` is stream_root_name(SRC). Refusals are kind config, with the
// errno the kernel would give (EISDIR, ENOTDIR, ENOENT).
Result<Landing> copy_landing(const CopyPath& dst, DestState state, bool src_is_dir, const std::string& src_root);

// The entry `entry` of a stream whose root is `root`, renamed to land as `name`: "root/x" ->
// "name/x"; with name "." -> "x", and the root itself -> "" (it is `dir`, which exists).
// Trailing slashes are dropped. nullopt when `entry` is not the root or below it.
std::optional<std::string> land_entry(const std::string& entry, const std::string& root, const std::string& name);

// An id through the text of /proc/PID/uid_map or gid_map ("inside outside count" lines):
// outward (the box's id -> the host's) or inward. nullopt when the map has no line for it.
std::optional<uint32_t> map_id(const std::string& map, uint32_t id, bool outward);

}  // namespace kern::oci
