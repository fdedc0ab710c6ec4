// One service of a compose file into the model (compose_model.h): short and long syntaxes,
// type errors with file, line and key path, a warning for each key kern does not carry out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/compose_model.h"
#include "cli/compose_text.h"
#include "cli/compose_tree.h"

namespace kern::compose {

struct ServiceContext {
  std::string project_name, project_dir;
  Lookup environment;                               // a bare KEY of `environment:` / env_file
  std::map<std::string, std::string> volume_names;  // top-level volume key -> full name
  std::vector<std::string> secret_keys;             // top-level secrets
  std::vector<std::string>* warnings = nullptr;
};

// `node` is services.NAME after merging, extends and interpolation (extends already applied).
Result<Service> parse_service(const std::string& name, const Node& node, const ServiceContext& ctx);

// A path of a compose file made absolute: `~` and `~/...` from HOME, a relative one against `base`.
std::string resolve_path(const std::string& path, const std::string& base, const Lookup& env);

// The value of a boolean key, or a type error naming `path`.
Result<bool> read_bool(const Node& node, const std::string& path);
// The value of a scalar key as a string, or a type error naming `path`.
Result<std::string> scalar_text(const Node& node, const std::string& path);

}  // namespace kern::compose
