// config.json's hooks: each one a program run with the container's state JSON on its stdin,
// exactly its own args and env, and its timeout. Runs in the processes of the verbs that run
// them: create (prestart, createRuntime, createContainer), start (startContainer, poststart),
// delete (poststop).
//
// createContainer and startContainer run in the container's mount namespace: the hook's path is
// opened in the runtime's namespace first (the specification resolves it there), then the hook
// process enters the container's mount namespace through box init's pidfd and executes the
// opened file.
#pragma once

#include <string>
#include <sys/types.h>

#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// Runs `hooks` in order; the first failure (exit status, signal, timeout) is an error naming the
// hook kind, its index and its path. container_pidfd >= 0: in that process's mount namespace;
// a startContainer hook (given the container's pid too) runs in every namespace of the
// container's and its path is the container's own (the specification's rule); every other
// kind's path is the caller's. cwd: where the hook starts (after it joined the mount namespace:
// createContainer starts in the root's directory, before pivot_root, as with runc).
Status run_hooks(const std::vector<Hook>& hooks, const char* kind, const std::string& state_json,
                 int container_pidfd = -1, pid_t container_pid = 0, const std::string& cwd = {});

// poststart and poststop: every hook runs; each failure is a `kern: warning:` line.
void run_hooks_warning(const std::vector<Hook>& hooks, const char* kind, const std::string& state_json);

}  // namespace kern::bundle
