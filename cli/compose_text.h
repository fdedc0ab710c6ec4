// The text rules of compose files (kern-compose(1)): ${VAR} interpolation, the .env / env_file
// format, command strings split as a shell would, and durations. Pure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::compose {

// A variable's value, or nullopt when it is unset.
using Lookup = std::function<std::optional<std::string>(const std::string& name)>;

// $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, ${VAR:+alt},
// ${VAR+alt} (the default, error and alt texts interpolated in turn) and $$ for a '$'. An unset
// variable without a default is empty. A malformed reference, or a :? / ? variable that is
// missing, is an error (the message only: the caller names the file and key).
Result<std::string> interpolate(std::string_view text, const Lookup& lookup);

// KEY=VALUE lines as Compose reads .env and env_file files: `export ` before KEY allowed, blank
// lines and `#` lines skipped, 'single-quoted' taken as is, "double-quoted" with backslash
// escapes (\n \t \" and the backslash) (and spanning lines), unquoted trimmed and cut at " #". A line with KEY alone is
// returned with nullopt (env_file: the caller's environment decides). A line without a valid
// KEY is an error naming `file:line`. With `interpolate_from`, ${VAR} in an unquoted or
// double-quoted value is interpolated from it, else from the lines above.
Result<std::vector<std::pair<std::string, std::optional<std::string>>>> parse_dotenv(
    std::string_view text, const std::string& file, const Lookup* interpolate_from = nullptr);

// A command string split into words as a POSIX shell would (quotes, backslashes), without
// expansions; an unterminated quote is an error.
Result<std::vector<std::string>> shell_split(std::string_view text);
// One word quoted for /bin/sh when it needs it; words joined by spaces.
std::string shell_quote(const std::string& word);
std::string shell_join(const std::vector<std::string>& words);

// A Compose duration ("1m30s", "10s", "1h", "500ms", "2.5s", or a bare number of seconds) in
// milliseconds; nullopt when it does not parse.
std::optional<long long> duration_ms(std::string_view text);

}  // namespace kern::compose
