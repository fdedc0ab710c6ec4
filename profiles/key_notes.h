// The keys of kern.toml that kern accepts (the SDK's upstream schema) but cannot give an effect
// on this kind of host, each with why: one note per key written, at its file:line:column, for
// `kern validate` (kern.toml(5) lists the same). Pure. Keys with an effect get no note.
#pragma once

#include <vector>

#include "profiles/profile_types.h"

namespace kern::profiles {

std::vector<Diagnostic> no_effect_notes(const ProfileSet& set);

}  // namespace kern::profiles
