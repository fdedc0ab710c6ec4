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
#include <linux/filter.h>
#include <sys/types.h>

#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// Where a hook runs. By default in the caller's namespaces, its path the caller's.
struct HookPlace {
  int container_pidfd = -1;  // >= 0: in that process's mount namespace (createContainer)
  // startContainer, as the specification says: in every namespace of the container's
  // (container_pid's), its path the container's own, under the container's seccomp filter
  // (runc runs it in its init after the filter is loaded).
  pid_t container_pid = 0;
  std::string cwd;  // where it starts once there ("" = that namespace's root)
  const std::vector<struct sock_filter>* seccomp = nullptr;
};

// Runs `hooks` in order; the first failure (exit status, signal, timeout) is an error naming the
// hook kind, its index and its path.
Status run_hooks(const std::vector<Hook>& hooks, const char* kind, const std::string& state_json,
                 const HookPlace& where = {});

// poststart and poststop: every hook runs; each failure is a `kern: warning:` line.
void run_hooks_warning(const std::vector<Hook>& hooks, const char* kind, const std::string& state_json);

}  // namespace kern::bundle
