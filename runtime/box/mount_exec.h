// Walks a mount plan through MountOps. Runs in the box's first process (the child), after the
// parent has written the id maps and before the workload is forked. Allocates only to build
// paths; never throws (a failing step is returned, the caller sends it to the parent).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/box/mount_ops.h"
#include "runtime/config_root.h"
#include "runtime/mount_plan.h"

namespace kern {

struct MountContext {
  std::string scratch;           // host path of the per-box scratch dir (a tmpfs goes on it)
  const std::vector<int>* bind_fds = nullptr;    // O_PATH fds opened by the parent, by index
  const std::vector<int>* device_fds = nullptr;  // O_PATH fds of granted device nodes
  // What the config-root steps (mount_plan.h) index into; null for a plan without them.
  const ConfigRoot* config = nullptr;
  // The hooks_before_enter step's line to the launcher: the channel, and the sync pipe's read
  // end, on which the launcher sends 'P' once its hooks ran.
  int channel_fd = -1;
  int sync_fd = -1;
};

struct MountFailure {
  int err = 0;
  const MountStep* step = nullptr;
  const char* what = "";  // the operation that failed: "mount", "resolve", "bind", ...
  std::string detail;     // what it failed on, when not the step's target ("proc on /proc", a source)
};

// A best-effort step that could not be done: the box goes on without it, and the launcher is
// told (step_skipped on the channel) so that the report and the caller see it.
using SkipFn = void (*)(void* cookie, const MountStep& step, int err);

// Returns true when every step succeeded (or was skipped through `on_skip`); otherwise fills
// `failure`.
bool execute_mount_plan(std::span<const MountStep> plan, const MountContext& ctx, MountOps& ops,
                        MountFailure* failure, SkipFn on_skip = nullptr, void* cookie = nullptr);

}  // namespace kern
