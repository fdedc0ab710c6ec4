// A compose service as the words of `kern box` (kern-compose(1)), for the orchestrator of
// `kern compose up`: the box joins the project's pod, which publishes the ports.
#pragma once

#include <string>
#include <vector>

#include "cli/compose_model.h"

namespace kern::compose {

// The box's name: container_name, else PROJECT-SERVICE-1.
std::string box_name(const Project& project, const Service& service);

// The words after `kern box`: -d, --name, --pod PROJECT, the compose labels (and the config
// hash), --image, the environment, mounts, limits (and --uid-range for a user other than root),
// health check, secrets, --entrypoint, then
// "--" and the command when there is one. Never -p (pod_publish_args). What kern cannot do for
// this service (an anonymous volume, a secret from the environment) is appended to `warnings`
// when it is given.
std::vector<std::string> box_args(const Project& project, const Service& service,
                                  std::vector<std::string>* warnings = nullptr);

// The -p values of every service of the project, for the pod ("[IP:]HOST:BOX/PROTO" or "BOX/PROTO").
// Every service's extra_hosts, for the pod's /etc/hosts (kern pod create --add-host).
std::vector<std::string> pod_add_host_args(const Project& project);
std::vector<std::string> pod_publish_args(const Project& project);

// A stable digest of the service's canonical form (64 hex digits of SHA-256; 16 of FNV-1a where libcrypto cannot be
// loaded), the same for the same model whatever the spelling in the file.
std::string config_hash(const Service& service);

// --stop-timeout's seconds from a stop_grace_period ("1m30s" -> "90"), rounded up; empty if none.
std::string stop_timeout_seconds(const std::string& grace);

}  // namespace kern::compose
