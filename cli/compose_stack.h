// What `kern compose` does to a stack: one project is one pod (kern pod, named after the
// project: its services share one network namespace and reach each other by name on 127.0.0.1,
// its ports are published once), each service one detached box in it, started in depends_on
// order and through `kern box` itself (the one launch path), as Docker Compose's verbs.
#pragma once

#include <string>
#include <vector>

#include "cli/compose_model.h"
#include "runtime/registry.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct UpOptions {
  bool detach = false;
  bool force_recreate = false;
  bool remove_orphans = false;
  unsigned wait_s = 120;  // how long a depends_on condition is waited for
  bool build = false;     // --build: build every service with build: (else only a missing image)
};

// kern compose build, and up's first step: `kern build` of each service with build: (of `only`,
// all when empty), tagged with its image name; with `missing_only`, only when the store lacks
// that image.
Result<int> compose_build(const compose::Project& p, const std::vector<std::string>& only, bool missing_only,
                          bool no_cache);

// The services in an order that starts each after what it depends on; a cycle, or a dependency
// on a service the project does not have (or has left out by profile), is an error.
Result<std::vector<const compose::Service*>> start_order(const compose::Project& p);

// The boxes of the project (running and exited), by the project label.
std::vector<BoxRecord> project_boxes(const std::string& runtime_dir, const std::string& project);

Result<int> compose_up(const compose::Project& p, const std::vector<std::string>& only, const UpOptions& o);
Result<int> compose_down(const compose::Project& p, bool volumes, unsigned timeout_s);
Result<int> compose_stop(const compose::Project& p, const std::vector<std::string>& only, unsigned timeout_s);
// kern logs of each service's box, each line prefixed with the service's name; -f follows all.
Result<int> compose_logs(const compose::Project& p, const std::vector<std::string>& only, bool follow);

}  // namespace kern::cli
