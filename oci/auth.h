// Registry authentication pieces: the WWW-Authenticate challenge parser, base64, and the
// credentials file that `kern login` writes. Any process, before clone.
//
// Credentials live in $XDG_CONFIG_HOME/kern/auth.json (else ~/.config/kern/auth.json), mode
// 0600, in the "auths" shape Docker and Podman use: {"auths":{"REGISTRY":{"auth":"base64(u:p)"}}}.
// They are never taken from the command line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::oci {

struct Challenge {
  std::string scheme;                        // "bearer", "basic" (lowercased)
  std::map<std::string, std::string> params;  // keys lowercased: realm, service, scope, error
};

// Parses the value of a WWW-Authenticate header ("Bearer realm=\"...\",service=\"...\"").
// Only the first challenge is used.
Result<Challenge> parse_www_authenticate(std::string_view value);

std::string base64_encode(std::string_view data);
Result<std::string> base64_decode(std::string_view text);

struct Credentials {
  std::string user, password;
};

std::string auth_file_path();
// The stored credentials for `registry`, if any. A file readable by others is refused.
Result<std::optional<Credentials>> load_credentials(const std::string& registry);
Status store_credentials(const std::string& registry, const Credentials& creds);
// Returns whether there was an entry to remove.
Result<bool> remove_credentials(const std::string& registry);
// Removes every entry; returns the registries that had one.
Result<std::vector<std::string>> remove_all_credentials();

// A registry as the user typed it ("localhost:5000", "quay.io", "docker.io") in the form
// references and the credentials file use; a usage error for anything else.
Result<std::string> registry_host_arg(const std::string& text);

}  // namespace kern::oci
