// config.json -> the LaunchPlan of an OCI container: namespaces (new, or joined by path), id maps,
// the process (args resolved along its own PATH, env, cwd, user and groups, each capability set,
// rlimits, umask, noNewPrivileges, terminal), hostname and domainname, the compiled seccomp
// program, and the root the child builds (oci_root.h). Runs in the process of `kern oci create`;
// plan_container is pure, open_joined_namespaces opens the paths.
//
// config.json is the policy in this mode: kern's own defaults for a `kern box` (its seccomp
// allowlist, its always-dropped capabilities) do not apply; what the engine asks for is what the
// container gets, and what kern cannot do is refused by check_supported, never left out.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/bundle/bundle_load.h"
#include "runtime/bundle/oci_root.h"
#include "runtime/launch_plan.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

struct CreateOptions {
  bool no_pivot = false;
  unsigned preserve_fds = 0;  // fds 3 .. 3+N-1 passed to the process at the same numbers
  bool initial_userns = true;  // kern itself runs in the initial user namespace
};

// The plan and what it points into: `plan.mounts.config` is `&root`, so an OciLaunch is never
// moved once planned (it lives behind a unique_ptr).
struct OciLaunch {
  LaunchPlan plan;
  ConfigRoot root;
  std::vector<UniqueFd> joined;  // the namespaces given by path (plan.join_ns holds their fds)
  std::vector<UniqueFd> bind_sources;  // root.mounts' source_fd (open_bind_sources)
  // Namespaces given by path that the create process itself enters before clone (user, pid,
  // time: their setns applies to children only, or must precede every other), as (fd, type).
  std::vector<std::pair<int, int>> enter_before_clone;
  std::vector<std::string> warnings;  // capability names this kernel does not know, ...
};

// CLONE_NEW* of a namespace type name ("network" -> CLONE_NEWNET); 0 for an unknown one.
unsigned long long namespace_flag(const std::string& type);

// RLIMIT_* name -> resource number; -1 for a name Linux does not have.
int rlimit_resource(const std::string& name);

// Pure: the process part of the plan (args along its own PATH, env, cwd, user and groups, each
// capability set, rlimits, umask, noNewPrivileges), for create and for exec.
Result<ExecPlan> oci_exec_plan(const Process& p, std::vector<std::string>& warnings);

// Pure: everything but the namespace paths, which open_joined_namespaces fills in. Fails with
// the JSON path on what cannot be planned (no mount namespace, a hostname without a uts
// namespace of its own, an unknown rlimit).
Result<std::unique_ptr<OciLaunch>> plan_container(const LoadedBundle& b, const std::string& id,
                                                  const CreateOptions& o, uid_t euid, gid_t egid);

// Opens linux.namespaces[].path, checks each is a namespace of its type, and files it under
// join_ns or enter_before_clone.
Status open_joined_namespaces(const Config& c, OciLaunch& l);

}  // namespace kern::bundle
