// Detached boxes (`kern box -d`): the command starts a small per-box supervisor (kern itself,
// double-forked into its own session; not a daemon: one per box, gone with its box) that owns
// the box's BoxHandle, and returns once the workload has exec'd. The supervisor is box init's
// parent, so box init's PR_SET_PDEATHSIG ends the box when the supervisor is SIGKILLed; the
// registry then reaps the record, the log and the socket at the next `kern ps` or start.
//
// The supervisor holds the record's owner lock while the box runs, writes the workload's
// output into the log ring (box_log.h), serves the box's socket (wire.h), forwards the signals
// it gets to box init, enforces --timeout, and at the end writes the exited record (report
// fd), tears the box down and keeps the registry record in the "exited" state (or removes it
// and the log, with --rm). With --restart it starts a new box of the name after an exit the
// policy answers (restart_policy.h), with the same spec, log, socket and kept upper layer. Command side: start_detached. Supervisor side: everything else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/detached/box_log.h"
#include "runtime/detached/health.h"
#include "runtime/detached/restart_policy.h"
#include "runtime/cgroup/enforcement.h"
#include "runtime/sys/error.h"
#include "runtime/timing.h"

namespace kern {

struct DetachedOptions {
  uint64_t log_size = kDefaultLogSize;  // the log ring's capacity (--log-size)
  bool auto_remove = false;             // --rm
  RestartPolicy restart;                // --restart, --restart-max
  HealthConfig health;                  // --health-*, or the image's Healthcheck
  // How the box was made (kern generate systemd makes it again so): the command's words and
  // the kern binary's absolute path.
  std::vector<std::string> create_argv;
  std::string kern_path;
};

// Claims the box's name, starts its supervisor and waits for its word: returns once the
// workload has exec'd, or with the error that kept it from starting (nothing is left then).
Status start_detached(const BoxSpec& spec, const DetachedOptions& opts, TimingPage* timing);

// The JSON object a detached record keeps for `kern inspect`: the spec's summary and the
// enforcement read back at start. Pure.
std::string detached_detail(const BoxSpec& spec, const Enforcement& enf, const DetachedOptions& opts);

}  // namespace kern
