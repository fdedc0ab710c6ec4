// Byte counts for people: "512 MiB", "1.5 GiB", "4096 B". Pure; used by messages of every
// module (profiles' units, the cgroup warnings).
#pragma once

#include <cstdint>
#include <string>

namespace kern::sys {

std::string human_size(uint64_t bytes);

}  // namespace kern::sys
