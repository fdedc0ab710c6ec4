// Readable names for detached boxes started without one ("brisk-otter"), as `docker run -d`
// gives. Pure: the caller supplies the random number.
#pragma once

#include <cstdint>
#include <string>

namespace kern {

// An adjective-noun name picked by `random`; always a valid box name.
std::string readable_box_name(uint64_t random);
// A random number from getrandom(2) (the clock when that fails).
uint64_t name_random();

}  // namespace kern
