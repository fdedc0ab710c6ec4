// The compose application model kern carries out (kern-compose(1)): what load_project reads
// from compose files, after interpolation, merging, extends and profiles. Every key kern does
// not carry out is kept out of it and named in Project::warnings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::compose {

struct PortSpec {
  std::string host_ip, published /* "8080" or "8080-8081" or empty */, target /* "80" or range */, protocol = "tcp";
};
struct VolumeMount {
  // source: bind: absolute host path; volume: the volume's FULL name (project_name + "_" + key
  // unless external/name:) or empty for anonymous; tmpfs: empty.
  std::string type /* bind|volume|tmpfs */, source, target;
  bool read_only = false;
};
struct DependsOn {
  std::string service, condition = "service_started";
  bool required = true, restart = false;
};
struct Healthcheck {
  std::vector<std::string> test; /* ["CMD",...] / ["CMD-SHELL","..."] / ["NONE"] */
  std::string interval, timeout, start_period;
  std::optional<int> retries;
  bool disable = false;
};
struct SecretRef {
  std::string source /* key in Project::secrets */, target /* file name under /run/secrets */;
};
// build: what `kern build` is given for the service's image.
struct BuildSpec {
  std::string context;     // absolute
  std::string dockerfile;  // as given (relative to the context), "" for the default
  std::string target, network;
  std::vector<std::pair<std::string, std::string>> args;
  std::vector<std::string> tags;
};
struct Service {
  std::string name, image, container_name, hostname, user, working_dir, restart, stop_signal, stop_grace_period,
      init_s /*unused*/;
  std::optional<std::vector<std::string>> command, entrypoint;   // shell-form strings split as compose does
  std::vector<std::pair<std::string, std::string>> environment;  // env_file lines first, then environment (later wins), interpolated
  std::vector<PortSpec> ports;
  std::vector<std::string> expose;
  std::vector<VolumeMount> volumes;
  std::vector<std::string> tmpfs;
  std::vector<DependsOn> depends_on;
  std::optional<Healthcheck> healthcheck;
  std::string cpus, memory, pids;  // deploy.resources.limits (and mem_limit/cpus/pids_limit)
  bool read_only = false, init = false, has_build = false;
  std::vector<std::string> cap_add, cap_drop, profiles, extra_hosts /* "NAME:IP" */;
  std::vector<std::pair<std::string, std::string>> ulimits /* name -> "soft:hard" or "n" */, sysctls, labels;
  std::vector<SecretRef> secrets;
  std::optional<BuildSpec> build;  // has_build: its image is built (named `image`, else PROJECT-SERVICE)
};
struct NamedVolume {
  std::string key, name;
  bool external = false;
  std::vector<std::pair<std::string, std::string>> labels;
};
struct Secret {
  std::string key, file /* absolute */, environment;
  bool external = false;
};
struct Project {
  std::string name, working_dir;  // project name (normalized), project directory
  std::vector<Service> services;  // active ones (profiles applied), in file order
  std::vector<NamedVolume> volumes;
  std::vector<Secret> secrets;
  std::vector<std::string> networks;
  std::vector<std::string> warnings;  // one line each, e.g. "services.web.foo: not supported by kern, ignored"
  // Added: the services the profiles leave out, in file order (the orchestrator starts one that
  // is named on its command line), and the files read, in order.
  std::vector<Service> inactive;
  std::vector<std::string> files;
  const Service* find(std::string_view name) const;
};
struct LoadOptions {
  std::vector<std::string> files;
  std::string project_name, project_directory, env_file;
  std::vector<std::string> profiles;
};

// Reads, interpolates and merges the compose files (the default ones of the current directory,
// or of project_directory, when `files` is empty) into the model. `environ` is the process
// environment (it wins over the project's .env). An error names the file and the key path.
Result<Project> load_project(const LoadOptions& options, const std::map<std::string, std::string>& environ);

// One stack runs as one pod: its services share one network namespace. Refuses two services
// that listen on the same container port (ports target or expose, same protocol) or publish the
// same host port, naming both and the port.
Status check_one_pod(const Project& project);

// The project name as Compose normalizes it: lowercase, only [a-z0-9_-], starting with a letter
// or a digit.
std::string normalize_project_name(std::string_view name);

}  // namespace kern::compose
