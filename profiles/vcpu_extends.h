// [[vcpu]] extends = "NAME": a profile takes every field of the named [[vcpu]] (but its name and
// backend) that it does not set itself, through any chain of parents. Pure. Cycles and unknown
// parents are errors at the extends key's file:line:column; cpuset and numa count as one field
// (a child that sets either takes neither from its parent).
#pragma once

#include <vector>

#include "profiles/profile_types.h"

namespace kern::profiles {

// Fills the inherited fields of `set.vcpu` in place and records them in VcpuProfile::inherited.
std::vector<Diagnostic> resolve_extends(ProfileSet& set);

}  // namespace kern::profiles
