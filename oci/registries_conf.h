// registries.conf in the containers v2 format (containers-registries.conf(5)), the part kern
// uses: [[registry]] entries with prefix, location, insecure, blocked, mirror-by-digest-only and
// [[registry.mirror]] (location, insecure, pull-from-mirror). Other top-level keys and tables
// (unqualified-search-registries, [aliases], short-name-mode, credential-helpers) belong to
// other tools and are passed over; an unknown key inside a [[registry]] gets a warning.
//
// Files, as Podman reads them: $CONTAINERS_REGISTRIES_CONF, else the user's
// ($XDG_CONFIG_HOME or ~/.config)/containers/registries.conf when it exists, else
// /etc/containers/registries.conf; then the drop-ins /etc/containers/registries.conf.d/*.conf
// and the user's registries.conf.d/*.conf in name order. A later entry with the same prefix
// replaces an earlier one. Any process, before clone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/reference.h"
#include "runtime/sys/error.h"

namespace kern::oci {

struct RegistryMirror {
  std::string location;
  bool insecure = false;
  std::string pull_from_mirror = "all";  // "all", "digest-only", "tag-only"
};

struct RegistryEntry {
  std::string prefix, location;  // prefix defaults to location
  bool insecure = false, blocked = false, mirror_by_digest_only = false;
  std::vector<RegistryMirror> mirrors;
  std::string file;  // where it was read, for messages
};

struct RegistriesConf {
  std::vector<RegistryEntry> entries;
};

// One place to pull an image from: a mirror or the registry itself.
struct PullEndpoint {
  Reference ref;  // registry and repository rewritten for this endpoint; tag and digest kept
  bool insecure = false;
  bool mirror = false;
};

// Parses one file's text (`path` names it in messages) and merges it into `conf`.
Status parse_registries_conf(std::string_view text, const std::string& path, RegistriesConf& conf);
// Reads the files above; missing files are skipped.
Result<RegistriesConf> load_registries_conf();

// The entry whose prefix matches `ref` the longest, or null.
const RegistryEntry* match_registry(const RegistriesConf& conf, const Reference& ref);
// Where to pull `ref` from, in order: the mirrors that apply, then the registry (its location
// when the entry rewrites it). A blocked registry is an error.
Result<std::vector<PullEndpoint>> pull_endpoints(const RegistriesConf& conf, const Reference& ref);
// Whether registries.conf marks `host` insecure (kern login).
bool registry_insecure(const RegistriesConf& conf, const std::string& host);

}  // namespace kern::oci
