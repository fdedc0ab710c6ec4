// Reading kern.toml from disk: the file, then parse (toml_profiles.h), then validation
// (validation.h). Used by `kern validate`, `kern config list` and the profile tokens.
#pragma once

#include <string>
#include <vector>

#include "profiles/profile_types.h"
#include "profiles/validation.h"
#include "runtime/sys/error.h"

namespace kern::profiles {

inline constexpr size_t kMaxConfigBytes = 1 << 20;

struct LoadOutcome {
  ProfileSet set;
  std::vector<Diagnostic> problems;  // parse and validation, in file order
  bool found = false;                // false: the file does not exist (an empty configuration)
  size_t error_count() const;
};

// Errors only when the file exists but cannot be read (not a regular file, too large, EACCES).
// A missing file gives found=false and no problem.
Result<LoadOutcome> check_profiles_file(const std::string& path, const DeviceInspector& inspect);

// The set, or one config Error "FILE:LINE:COL: message" naming the first problem (and how many
// more there are). Warnings are dropped here; apply_profiles reports what concerns a token.
// A missing file is an empty set when `missing_ok`, else an error.
Result<ProfileSet> load_profiles(const std::string& path, bool missing_ok);

}  // namespace kern::profiles
