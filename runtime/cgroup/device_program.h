// linux.resources.devices on cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the
// container's cgroup, which the kernel asks before every open and mknod of a device node by the
// container's processes. Built in the process of `kern oci create` (device_program is pure).
//
// Semantics, as the specification and runc's cgroup v2 emulation have them: the rules are read in
// order and the last one that matches a request decides (allow or deny); a request no rule matches
// is denied. A rule matches when its type is "a" (or empty) or the node's, its major and minor are
// absent or equal, and the access asked for (r, w, m) is within the rule's. The default devices
// every container has (null, zero, full, random, urandom, tty, console, ptmx, /dev/pts/*) are
// allowed after the configuration's rules, so a "deny all" keeps them usable.
//
// The nodes of linux.devices get a rule for mknod ("m") only, so they can be made: whether the
// container may read or write one is the configuration's rules' to say (an engine that gives a
// device read-only writes "r" for it; runc, which allows mknod of every node, does the same). A
// default device that linux.devices names itself loses its default rule too, as with runc: the
// configuration decides for it.
#pragma once

#include <linux/bpf.h>

#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// The rules the program decides by: the configuration's, then the default devices but those
// `nodes` (linux.devices) names by path, then mknod of each of `nodes`.
std::vector<DeviceRule> effective_device_rules(const std::vector<DeviceRule>& configured,
                                               const std::vector<Device>& nodes = {});

// The program for `rules` (last match wins, default deny).
std::vector<struct bpf_insn> device_program(const std::vector<DeviceRule>& rules);

// Loads `prog` and attaches it to the cgroup `cgroup_fd` (BPF_CGROUP_DEVICE, allowing other
// programs beside it). Needs CAP_SYS_ADMIN on the host.
Status attach_device_program(int cgroup_fd, const std::vector<struct bpf_insn>& prog);

}  // namespace kern::bundle
