// Edit distance and the nearest known word; see suggest.h.
#include "profiles/suggest.h"

#include <algorithm>

namespace kern::profiles {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? size_t{0} : size_t{1})});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view closest(std::string_view word, const std::vector<std::string_view>& candidates, size_t below) {
  // A tie goes to the word whose ending is more like the typed one's ("imags": images, not
  // image), whatever order the candidates come in.
  auto suffix = [&](std::string_view c) {
    size_t n = 0;
    while (n < c.size() && n < word.size() && c[c.size() - 1 - n] == word[word.size() - 1 - n]) ++n;
    return n;
  };
  std::string_view best;
  size_t best_d = below;
  for (auto c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d || (d == best_d && !best.empty() && suffix(c) > suffix(best))) best_d = d, best = c;
  }
  return best;
}

}  // namespace kern::profiles
