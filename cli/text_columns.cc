// See text_columns.h.
#include "cli/text_columns.h"

#include <algorithm>

namespace kern::cli {

std::string align_columns(const std::vector<std::vector<std::string>>& lines, size_t min_width) {
  std::vector<size_t> width;
  for (const auto& l : lines)
    for (size_t i = 0; i + 1 < l.size(); ++i) {
      if (width.size() <= i) width.resize(i + 1, min_width);
      width[i] = std::max(width[i], l[i].size() + 3);
    }
  std::string out;
  for (const auto& l : lines) {
    std::string line;
    for (size_t i = 0; i < l.size(); ++i) {
      line += l[i];
      if (i + 1 < l.size()) line.append(width[i] - l[i].size(), ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::vector<std::string> split_tabs(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == '\t') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

}  // namespace kern::cli
