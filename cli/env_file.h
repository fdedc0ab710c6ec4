// --env-file and -e of kern box and kern exec (kern-box(1), kern(1)): one parser for both verbs.
// Pure but for read_env_flags' reading of the files.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

// A variable of the caller's environment by name: its value, or nullptr when it is unset.
using CallerEnv = std::function<const char*(const std::string& name)>;
// The real one (getenv).
CallerEnv caller_environment();

// "K=V" with a non-empty key (any byte but '=' and NUL is accepted in a key, as the kernel does,
// except whitespace); with `bare_ok`, a bare "K" too. Returns the error message or empty.
std::string check_env_assignment(const std::string& kv, bool bare_ok = false);
// The entry an accepted -e word gives the box: "K=V" itself, or for a bare "K" (as docker run
// -e K) the caller's K copied as "K=value", nullopt when the caller has no K (the box gets
// none). The user named the variable, so this is never a leak of the host environment.
std::optional<std::string> env_entry(const std::string& word, const CallerEnv& caller);
// The lines of an env file: K=V, or a bare K resolved as env_entry() does; `#` comments and
// blank lines skipped; a bad line is an error naming `file:line`.
Result<std::vector<std::string>> parse_env_file(const std::string& text, const std::string& file,
                                                const CallerEnv& caller);
// Appends `add` to `env`, replacing an existing key (later wins; an entry without '=' is its own
// key). Linear in the sizes of both.
void merge_env(std::vector<std::string>& env, const std::vector<std::string>& add);

// The bound on a box's environment (man/kern-box.1): variables, and bytes counted as execve
// does (each K=V with its NUL). Past either the kernel would refuse the exec with E2BIG
// anyway under the usual 8 MiB stack limit, after everything had been set up.
inline constexpr size_t kMaxEnvEntries = 65536;
inline constexpr size_t kMaxEnvBytes = 1 << 20;
// Refuses `env` past the bound; `source` names what was merged last ("--env-file \"f\"").
Status check_env_bounds(const std::vector<std::string>& env, const std::string& source);

// The --env-file files, then the -e words, merged into `env` in that order (later wins), each
// step checked against the bound. A file must be a regular file (a FIFO or a device would block
// or never end); a bare K in either copies the caller's K. kern box and kern exec both call
// this, so the same words give the same environment and the same error line.
Status merge_env_flags(std::vector<std::string>& env, const std::vector<std::string>& env_files,
                       const std::vector<std::string>& words, const CallerEnv& caller);

}  // namespace kern::cli
