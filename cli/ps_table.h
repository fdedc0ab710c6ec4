// The table `kern ps` prints: one header and one line per record, every line ending in a
// newline whatever the records hold. Pure; ps_command.cc does the listing and the writing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/registry.h"

namespace kern::cli {

// Widest IMAGE and COMMAND cells before they are cut with an ellipsis (unless no_trunc).
inline constexpr size_t kPsImageWidth = 28;
inline constexpr size_t kPsCommandWidth = 48;

// `text` cut to at most `width` characters (UTF-8 code points), the last one an ellipsis when
// anything was cut; never splits a character.
std::string fit_cell(std::string_view text, size_t width);

// What STATUS says: "running", "running (healthy, restarts 2)", "paused", "exited (CODE)",
// "restarting (CODE)".
std::string ps_status(const BoxRecord& b);

// With `with_status` (kern ps -a) a STATUS column says ps_status; a PORTS column
// ("0.0.0.0:8080->80/tcp,...", "-" for none) when any of the boxes publishes a port.
std::string ps_table(const std::vector<BoxRecord>& boxes, int64_t now_unix, bool no_trunc,
                     bool with_status = false);

}  // namespace kern::cli
