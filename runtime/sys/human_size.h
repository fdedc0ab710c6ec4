// Byte counts for people: "512 MiB", "1.5 GiB", "4096 B". Pure; used by messages of every
// module (profiles' units, the cgroup warnings).
#pragma once

#include <cstdint>
#include <string>

namespace kern::sys {

std::string human_size(uint64_t bytes);

// A figure with at most four decimals, trailing zeros dropped: "1.5", "0.25", "2".
std::string short_decimal(double v);

}  // namespace kern::sys
