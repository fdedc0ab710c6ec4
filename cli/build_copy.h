// COPY and ADD of kern build: what the sources name (the build context, filtered by
// .dockerignore, or another stage's or image's tree with --from), where each lands under the
// destination as Docker's rules say, with --chown and --chmod, as one layer. Any process.
//
// A source the pattern names is followed when it is a symlink, as Docker follows it, inside the
// root (never outside it: the root is "/" to it), and copied under its own name; below a copied
// directory, symlinks are copied as symlinks and never followed. The
// destination is resolved inside the image's tree, following the image's own symlinks (/bin ->
// usr/bin), so a layer never replaces a directory symlink of a lower layer.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "oci/build/dockerignore.h"
#include "oci/layer_tar.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::cli {

// Where COPY reads from: the context (with its .dockerignore) or a tree.
struct CopyRoot {
  int fd = -1;                                  // O_DIRECTORY
  std::string shown;                            // "the build context", "stage build"
  const oci::build::IgnoreRules* ignore = nullptr;
};

struct CopyRequest {
  std::vector<std::string> sources;  // patterns, expanded
  std::string dest;                  // expanded; relative to workdir when not absolute
  std::string workdir;               // the stage's WORKDIR ("/" when none)
  std::optional<std::pair<uint32_t, uint32_t>> chown;
  std::optional<mode_t> chmod;
  bool add = false;                  // ADD: a local tar archive is unpacked into dest
  // Heredoc files (COPY <<EOF /dst): name and content, in order.
  std::vector<std::pair<std::string, std::string>> inline_files;
  int64_t now = 0;                   // mtime of the directories this creates
};

// One planned entry of the layer.
struct CopyEntry {
  enum class Kind { dir, file, symlink, data, archive } kind = Kind::file;
  std::string path;       // in the layer, no leading "/"
  mode_t perm = 0644;
  uint32_t uid = 0, gid = 0;
  bool chown = false;     // archive: --chown given (its members take uid:gid, 0:0 included)
  int64_t mtime = 0;
  int src_dir = -1;       // file/archive: read from src_dir/src_name
  std::string src_name, shown;
  uint64_t size = 0;
  std::string text;       // symlink target or inline data
};

struct CopyPlan {
  std::vector<UniqueFd> dirs;  // the source directories the entries read from
  std::vector<CopyEntry> entries;
};

// Plans the copy: each pattern must match something (else an error naming it and the root).
// `image_root` is the stage's tree (-1: FROM scratch with nothing yet).
Result<CopyPlan> plan_copy(const CopyRoot& root, int image_root, const CopyRequest& req);

// A digest of what the plan copies: paths, types, modes, owners and file contents, not times
// (the cache key of a COPY step).
Result<std::string> plan_digest(const CopyPlan& plan);

// Writes the plan into `tar`.
Status write_plan(const CopyPlan& plan, oci::LayerTar& tar);

// --chown USER[:GROUP] against the stage's /etc/passwd and /etc/group (numbers as they are; a
// user alone gives the group of the same number, as Docker does).
Result<std::pair<uint32_t, uint32_t>> resolve_chown(int image_root, const std::string& text);

}  // namespace kern::cli
