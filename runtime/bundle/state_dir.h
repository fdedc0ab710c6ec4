// Where `kern oci` keeps its containers: one directory per container id under --root, holding
// state.json (the ContainerRecord). Runs in whichever process runs a `kern oci` verb; every verb
// is a separate process, so the files are the only shared memory, written by rename.
#pragma once

#include <string>
#include <vector>

#include "runtime/bundle/state.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// --root when given; else /run/kern-oci for root, $XDG_RUNTIME_DIR/kern-oci for others (a
// private /tmp/kern-oci-<uid> when that is unset). uid 0 of a user namespace other than the
// initial one (rootless podman runs its runtime so) is one of the others.
std::string default_state_root(uid_t euid, const char* xdg_runtime_dir, bool initial_userns = true);

// Whether this process is in the initial user namespace (/proc/self/uid_map maps every id).
bool in_initial_user_namespace();

class StateDir {
 public:
  // Opens (creating 0700) the root directory.
  static Result<StateDir> open(const std::string& root);

  const std::string& root() const { return root_; }
  std::string container_dir(const std::string& id) const { return root_ + "/" + id; }

  // A new container's directory: refused when the id is taken.
  Status create(const std::string& id) const;
  Status write(const ContainerRecord& r) const;  // atomically (state.json.tmp, rename)
  // The record, or a config error: "container \"ID\" does not exist" (ENOENT) when there is no
  // directory; otherwise an error naming the broken entry (no state.json, not a regular file,
  // not a record, or the record of another id) with the hint that delete --force removes it.
  Result<ContainerRecord> read(const std::string& id) const;
  // A file of the container's directory (state.json, config.json): opened without blocking and
  // without following a link; anything but a regular file is refused.
  Result<std::string> read_entry_file(const std::string& id, const char* name, size_t limit) const;
  // Whether the container's directory exists (whatever is in it).
  bool exists(const std::string& id) const;
  // Ids of every container directory, sorted.
  Result<std::vector<std::string>> list() const;
  // Removes the container's directory and all in it; a missing one is not an error.
  Status remove(const std::string& id) const;

 private:
  explicit StateDir(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

// The record's pid as it is now (its start time, 0 when gone or a zombie) -> status.
ContainerStatus current_status(const ContainerRecord& r);

}  // namespace kern::bundle
