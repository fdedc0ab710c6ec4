// The named volumes of a box start and of the volume verbs: made when a box's -v names one that
// does not exist, marked for the copy-up when empty, taken away again when the start that made
// them failed before anything was written in them; and which boxes use which volume.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"
#include "runtime/volume_store.h"

namespace kern::cli {

// Every volume bind of `spec` made or found in the caller's store: its source set to the
// volume's _data, copy_up set when that is empty. Returns the names this call made.
Result<std::vector<std::string>> ensure_box_volumes(BoxSpec& spec);
// After a failed start: each volume of `made` that is still empty is removed.
void discard_new_volumes(const std::vector<std::string>& made);

// A start that makes volumes: made before `start` runs, discarded when it fails.
template <typename Start>
auto with_box_volumes(BoxSpec& spec, Start&& start) -> decltype(start()) {
  KERN_TRY_ASSIGN(std::vector<std::string> made, ensure_box_volumes(spec));
  auto r = start();
  if (!r) discard_new_volumes(made);
  return r;
}

// Volume name -> the boxes (listed records: running, or exited and kept) that mount it.
std::map<std::string, std::vector<std::string>> volume_users();

}  // namespace kern::cli
