// Reading a bundle from disk for `kern oci create`/`run`: config.json parsed, checked against
// what kern and this host carry out, its root found, its seccomp program compiled. Runs in the
// process of the verb, before anything is created.
#pragma once

#include <optional>
#include <string>

#include "runtime/bundle/config.h"
#include "runtime/bundle/seccomp_compile.h"

namespace kern::bundle {

struct LoadedBundle {
  std::string dir;        // absolute
  std::string text;       // config.json as read and parsed (create keeps these bytes)
  std::string root_path;  // absolute: root.path joined to dir when relative
  Config config;
  std::optional<CompiledSeccomp> seccomp;
};

// What this host has of the facts check_supported needs.
HostFacts probe_host();

// `seccomp_cache`: the directory of compiled programs (seccomp_cache.h), or empty for none.
Result<LoadedBundle> load_bundle(const std::string& bundle_dir, const std::string& seccomp_cache = "");

}  // namespace kern::bundle
