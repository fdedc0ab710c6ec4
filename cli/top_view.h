// What `kern top` without a NAME shows: one row per running box (NAME, STATE, CPU %,
// MEM / LIMIT, PIDS, NET RX / TX, UP), the busiest first, from the same readings as kern stats
// (cli/box_stats.h). Pure: the verb reads, TerminalScreen draws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/box_stats.h"
#include "runtime/registry.h"

namespace kern::cli {

// `usage[i]` is the reading of `boxes[i]`. The table, header first, sorted by CPU (then name).
std::string top_table(const std::vector<BoxRecord>& boxes, const std::vector<BoxUsage>& usage, int64_t now_unix);

}  // namespace kern::cli
