// Tab-separated cells as columns of spaces, the way Go's text/tabwriter lays out the tables of
// docker images and runc list: each column as wide as its widest cell plus three spaces (and at
// least `min_width`); the last cell of a line is not padded.
#pragma once

#include <string>
#include <vector>

namespace kern::cli {

std::string align_columns(const std::vector<std::vector<std::string>>& lines, size_t min_width = 0);

// "a\tb\tc" as {"a", "b", "c"}.
std::vector<std::string> split_tabs(const std::string& s);

}  // namespace kern::cli
