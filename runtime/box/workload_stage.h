// Whether the workload's execve succeeded, decided by box init when the workload's spawn
// returns. Pure; box init (child only) calls it, unit tests check every case.
//
// The workload shares box init's memory and box init is suspended until the workload calls
// execve or dies (CLONE_VM|CLONE_VFORK), so the last stage the workload wrote is what it had
// reached: in the exec stage, the spawn returning means an execve succeeded (the workload's own
// code leaves that stage only by marking itself failed); a workload that died before it (killed,
// out of memory) never wrote it. The one case left open is a kill that lands inside a
// successful-looking execve itself, which the kernel gives no way to tell from a kill of the new
// program a moment later: both count as started.
#pragma once

#include "runtime/box/child_args.h"

namespace kern {

enum class SpawnOutcome {
  started,     // box init sends exec_ok
  failed,      // the workload reported its own failure on the channel (setup_failed)
  died_early,  // it died before its execve without a word: nothing was started
};

SpawnOutcome classify_spawn(int stage);

}  // namespace kern
