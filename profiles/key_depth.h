// The nesting of a kern.toml's keys, bounded before toml++ reads the text. toml++ bounds the
// nesting of values (arrays and inline tables, TOML_MAX_NESTED_VALUES) but not of keys: a
// dotted key or table header of 80,000 parts (a.a.a...) builds 80,000 nested tables, and the
// recursion over them overflows the stack of every verb that reads the file. Pure.
#pragma once

#include <optional>
#include <string_view>

#include "profiles/profile_types.h"

namespace kern::profiles {

// The deepest table a key may reach: its table header's parts plus its own dotted parts plus
// the inline tables around it. kern's own tables are two deep ("vgpio.usb_ports").
inline constexpr size_t kMaxKeyDepth = 64;

// An error at the first key past kMaxKeyDepth (its line and column), or nullopt. Text that is
// not valid TOML is left for toml++ to refuse: the scan only counts.
std::optional<Diagnostic> check_key_depth(std::string_view text);

}  // namespace kern::profiles
