// The environment as kern reads it: a variable counts when it is set and not empty
// (KERN_TIMING=, like an unset KERN_TIMING, turns nothing on; an empty PATH is no PATH).
#pragma once

#include <cstdlib>
#include <string>

namespace kern::sys {

// The variable's value, or "" when it is unset or empty.
inline std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// Whether the variable is set to something (any value but the empty one).
inline bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

}  // namespace kern::sys
