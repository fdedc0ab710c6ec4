// Which flags a command line can name; see flag_filter.h.
#include "cli/flag_filter.h"

#include <algorithm>

namespace kern::cli {

FlagFilter::FlagFilter(const std::vector<std::string>& words) : all_(false) {
  for (const auto& w : words) {
    if (w.size() < 2 || w[0] != '-') continue;
    if (w[1] == '-') {
      std::string name = w.substr(0, w.find('='));
      if (name.rfind("--help", 0) == 0) all_ = true;
      longs_.push_back(std::move(name));
    } else {
      shorts_ += w.substr(1);
    }
  }
  if (shorts_.find('h') != std::string::npos) all_ = true;
}

bool FlagFilter::wants(std::string_view names) const {
  if (all_) return true;
  size_t pos = 0;
  while (pos <= names.size()) {
    size_t comma = names.find(',', pos);
    std::string_view n = names.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (n.size() < 2 || n[0] != '-') return true;  // a positional
    if (n[1] == '-') {
      if (std::find(longs_.begin(), longs_.end(), n) != longs_.end()) return true;
    } else if (n.size() == 2 && shorts_.find(n[1]) != std::string::npos) {
      return true;
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return false;
}

}  // namespace kern::cli
