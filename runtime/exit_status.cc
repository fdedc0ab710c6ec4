// Exit-status rules; see exit_status.h.
#include "runtime/exit_status.h"
#include "runtime/box/workload_stage.h"

#include <sys/wait.h>

namespace kern {

int exit_code_from_wait_status(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 125;  // stopped/continued are never passed here; treat as a kern failure
}

SpawnOutcome classify_spawn(int stage) {
  if (stage == stage_failed) return SpawnOutcome::failed;
  if (stage == stage_exec) return SpawnOutcome::started;
  return SpawnOutcome::died_early;
}

}  // namespace kern
