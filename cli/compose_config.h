// `kern compose config`'s view of a project (kern-compose(1)): the model in the shape of
// `docker compose config`, as a Node tree for the YAML and JSON writers (compose_tree.h).
#pragma once

#include "cli/compose_model.h"
#include "cli/compose_tree.h"

namespace kern::compose {

// One service, its keys sorted, long syntax throughout (command as a list, environment as a
// mapping, ports and volumes as mappings, depends_on with condition and required).
Node service_node(const Service& service);
// The project: name, services (sorted by name), volumes, secrets.
Node project_node(const Project& project);

}  // namespace kern::compose
