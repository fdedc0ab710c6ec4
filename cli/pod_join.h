// kern box --pod NAME and --network NAME (a named network): the box joins the namespaces of a
// running pod or network (runtime/pod/) instead of making its own network, and binds the pod's
// /etc/hosts (which lists every box that joined, so they reach each other by name),
// /etc/resolv.conf and, in a pod, /etc/hostname.
#pragma once

#include <string>

#include "cli/net_flags.h"
#include "runtime/box_spec.h"
#include "runtime/pod/pod_store.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// Whether --net's word names a network of `kern network create` (none of none, host, private).
bool names_network(const std::string& word);

// Fills spec.pod, the binds and the label of the pod (or network) `name`, and adds the box's
// name to the pod's hosts file. Refuses network flags of the box's own (the pod's network is
// the box's: its ports are published when the pod is made) and a pod that does not run.
Status join_pod(pod::Kind kind, const std::string& name, const NetOptions& netx, bool hostname_given,
                const std::vector<std::string>& aliases, BoxSpec& spec);

}  // namespace kern::cli
