// The box's network namespace, made beside its root instead of inside clone3. Creating a network
// namespace is the largest single cost of a box's start (its loopback device, sysctl tables and
// sysfs entries: about 0.4 ms here), and it is independent of the root the box's first process
// builds meanwhile. So the launcher clones the box without CLONE_NEWNET and starts a short-lived
// helper process, which joins the box's user namespace (so the new namespace is owned by it,
// exactly as if clone3 had made it), unshares the network namespace, brings its loopback up and
// hands it to the box's first process over a socket. That process joins it (setns) before the
// first step that needs it (the sysfs mount) and in any case before its init runs: the workload
// never sees another namespace.
//
// Processes: netns_helper_start/netns_helper_finish run in the launcher; netns_helper_main in the
// helper (a CLONE_VM copy of the launcher, sharing its memory and fd table, like a thread with its
// own credentials: it makes raw system calls only, never touches errno or the heap);
// join_box_netns in the box's first process.
#pragma once

#include <sys/types.h>

namespace kern {

// True when this build can run the helper (its raw system calls exist for the architecture).
bool netns_helper_supported();

struct NetnsHelper {
  pid_t pid = -1;
  int sock = -1;        // the helper's end (the launcher's fd, shared with the helper)
  int box_pidfd = -1;   // box init's pidfd: the user namespace to join
  bool loopback_up = false;
  alignas(16) unsigned char stack[16384];
};

// Starts the helper; returns 0 or the errno of the clone.
int netns_helper_start(NetnsHelper& h);
// Waits for the helper to end (it always ends on its own, quickly) and closes its socket end.
void netns_helper_finish(NetnsHelper& h);

// In the box's first process: receives the namespace from the helper and joins it. Returns 0, or
// an errno with *what naming the step that failed (the helper's or this process's).
int join_box_netns(int sock, const char** what);

// Brings "lo" up in the calling process's network namespace (raw system calls where the helper
// runs: no errno); returns 0 or the errno. The helper's and the box's first process's.
int bring_loopback_up();

}  // namespace kern
