// `kern oci plan`: what create would do with a bundle, from the plan create itself makes
// (plan_container), rendered by runtime/plan_text.h (its root steps by describe_config_steps)
// with the files its cgroup gets (resource_files). Reads the bundle,
// creates nothing. Runs in the process of the verb.
#pragma once

#include <string>

#include "runtime/bundle/oci_plan.h"

namespace kern::bundle {

Result<std::string> container_plan(const std::string& bundle_dir, const std::string& id, const CreateOptions& o,
                                   bool json);

}  // namespace kern::bundle
