// "Did you mean": the closest of a set of known words to a misspelt one (kern.toml keys, kern's
// verbs and flags). Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kern::profiles {

// Levenshtein distance: insertions, deletions and substitutions of one character each cost 1.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if it is nearer than `below` edits; "" when none is. The first
// of equally near candidates wins.
std::string_view closest(std::string_view word, const std::vector<std::string_view>& candidates,
                         size_t below = 3);

}  // namespace kern::profiles
