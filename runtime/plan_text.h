// --plan: a LaunchPlan as the launch will carry it out, step by step, rendered from the plan
// alone (prepare()'s for `kern box`, plan_container()'s for `kern oci plan`): the cgroup with the
// limits the launch puts in force (enforcement.h's defaults, the ones the cgroup code applies),
// the namespaces cloned, the id maps, the mount steps, the hostname, pid 1, the workload's
// credentials, seccomp and execve. What the plan does not hold (the network a caller attaches,
// an OCI container's root and cgroup, a profile's notes) the caller passes in, from the same
// structures its launch walks. Pure; any process.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/launch_plan.h"

namespace kern {

struct PlanExtras {
  std::string network;                  // "host", "none", "private"... ("" = not said)
  std::string network_note;             // appended to the hostname line: ", loopback up; ..."
  std::vector<std::string> cgroup;      // replaces the cgroup line's text when not empty
};

// The numbered lines: "1. cgroup: ...", "2. clone3: namespaces ...", "3. id map: ...",
// "4.N mount: ...", "5. hostname: ...", "6. init: ...", "7. workload: ...", then one
// "device grant:" line per granted device.
std::string plan_text(const LaunchPlan& p, const PlanExtras& extras);

// The same facts, one key per step (cgroup, namespaces, id_map, mounts, hostname, network,
// init, workload, device_grants); a limit the plan leaves to its default carries that default.
nlohmann::json plan_json(const LaunchPlan& p, const PlanExtras& extras);

// "best-effort", "require", "allow-uncapped", "none".
const char* cgroup_policy_name(CgroupPolicy p);

// Names of the CLONE_NEW* flags in `flags`, in the order the launch lists them.
std::vector<std::string> namespace_names(unsigned long long flags);

}  // namespace kern
