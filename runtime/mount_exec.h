// Walks a mount plan through MountOps. Runs in the box's first process (the child), after the
// parent has written the id maps and before the workload is forked. Allocates only to build
// paths; never throws (a failing step is returned, the caller sends it to the parent).
#pragma once

#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/mount_ops.h"
#include "runtime/mount_plan.h"

namespace kern {

struct MountContext {
  std::string scratch;           // host path of the per-box scratch dir (a tmpfs goes on it)
  const BoxSpec* spec = nullptr;
  const std::vector<int>* bind_fds = nullptr;    // O_PATH fds opened by the parent, by index
  const std::vector<int>* device_fds = nullptr;  // O_PATH fds of granted device nodes
};

struct MountFailure {
  int err = 0;
  const MountStep* step = nullptr;
  const char* what = "";  // the operation that failed: "mount", "resolve", "bind", ...
};

// Returns true when every step succeeded; otherwise fills `failure`.
bool execute_mount_plan(const std::vector<MountStep>& plan, const MountContext& ctx, MountOps& ops,
                        MountFailure* failure);

}  // namespace kern
