// --env-file and -e parsing (CONTRACT section 1). Pure.
#pragma once

#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

// "K=V" with a non-empty key of [A-Za-z_][A-Za-z0-9_]* ... (any byte but '=' and NUL is accepted
// in a key, as the kernel does, except whitespace). Returns the error message or empty.
std::string check_env_assignment(const std::string& kv);
// The lines of an env file: K=V, `#` comments and blank lines skipped; a bad line is an error
// naming `file:line`.
Result<std::vector<std::string>> parse_env_file(const std::string& text, const std::string& file);
// Appends `add` to `env`, replacing an existing key (later wins).
void merge_env(std::vector<std::string>& env, const std::vector<std::string>& add);

}  // namespace kern::cli
