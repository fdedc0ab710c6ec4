// Cloning box init into a pod's namespaces (--pod, --network NAME). Launcher side.
//
// A box of a pod must be in the pod's user namespace to join its network namespace (the kernel
// asks for CAP_SYS_ADMIN over the namespace's owner). The launcher itself never enters it (its
// uid would read 0 there, and every path it derives from its uid after would change): a forked
// intermediate process enters the holder's user namespace and the namespaces the pod shares,
// then clones box init with CLONE_PARENT, so box init is the launcher's child as any box's; the
// intermediate hands back box init's pid and pidfd and ends.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

// The holder of a pod, checked to be the process the pod recorded (pid and start time).
Result<UniqueFd> open_pod_holder(pid_t pid, uint64_t start_time);

// As clone3 with CLONE_PIDFD: box init's pid in this process (its pidfd in *pidfd), 0 in box init,
// -1 with errno. `flags` are the namespaces box init makes for itself (never CLONE_NEWUSER).
pid_t clone_into_pod(int holder_pidfd, int ns_flags, unsigned long long flags, int cgroup_fd, int* pidfd);

}  // namespace kern
