// kern.toml text -> ProfileSet (kern.toml(5)), with a location for every problem. Pure:
// takes the text, reads no file. Unknown keys are errors, never ignored; a table kern does not
// read is an error when its name is a near miss of one of kern's, and otherwise skipped with a
// note that names it (upstream files carry tables of their own). Values are checked for type and
// unit here, cross references (backends, names) in validation.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "profiles/profile_types.h"

namespace kern::profiles {

// The [kern] config_version this kern reads; a file written for a later one is refused.
inline constexpr int64_t kConfigVersion = 1;

struct ParseOutcome {
  ProfileSet set;                    // what could be read; complete only when problems is empty
  std::vector<Diagnostic> problems;  // in file order
};

// `file` is only used for ProfileSet::file and toml++'s messages.
ParseOutcome parse_profiles(std::string_view text, const std::string& file);

}  // namespace kern::profiles
