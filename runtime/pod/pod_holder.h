// A pod's namespaces on the host (pods and named networks alike; pod_store.h): `kern pod create`
// starts a small supervisor (kern itself, double-forked into its own session, as a detached
// box's; not a daemon: one per pod, gone with it) that clones the holder, a process that does
// nothing but keep a user namespace (the caller's uid as 0, as a box's) and the network, ipc and
// uts namespaces made in it alive. With --net private the supervisor runs pasta for the holder's
// network, publishing the pod's ports once for every box in it. The supervisor holds the pod's
// lock while the holder lives; SIGTERM (kern pod stop) ends the holder and pasta, and the pod's
// record says "stopped". The boxes of a pod join the holder's namespaces (BoxSpec::pod).
#pragma once

#include <string>

#include "runtime/box_spec.h"
#include "runtime/pod/pod_store.h"
#include "runtime/sys/error.h"

namespace kern::pod {

// Starts the pod `rec` (its directory exists, with no running supervisor) and returns once its
// namespaces exist and its ports are published, with the record written ("running"), or with
// the error that kept it from starting (nothing runs then). `net` carries --net private's
// settings (net == NetMode::private_net) for pasta.
Status start_pod(const std::string& dir, PodRecord rec, const BoxSpec& net);

// Ends the pod's supervisor (SIGTERM; SIGKILL after `timeout_s`) and waits until its lock is free.
Status stop_pod(const std::string& dir, const PodRecord& rec, unsigned timeout_s);

}  // namespace kern::pod
