// parse_mountinfo (see mountinfo.h).
#include "runtime/sys/mountinfo.h"

namespace kern::sys {

std::string unescape_mountinfo(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      char a = s[i + 1], b = s[i + 2], c = s[i + 3];
      if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out += static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

namespace {

// The space-separated words of `s`.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace

std::vector<MountInfo> parse_mountinfo(std::string_view text) {
  std::vector<MountInfo> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(i, e - i);
    i = e + 1;
    // id parent major:minor root mount-point options [optional...] - type source super-options
    size_t sep = line.find(" - ");
    if (sep == std::string_view::npos) continue;
    auto head = words(line.substr(0, sep));
    auto tail = words(line.substr(sep + 3));
    if (head.size() < 5 || tail.size() < 2) continue;
    out.push_back({unescape_mountinfo(head[3]), unescape_mountinfo(head[4]), std::string(tail[0]),
                   unescape_mountinfo(tail[1]), tail.size() > 2 ? std::string(tail[2]) : std::string()});
  }
  return out;
}

}  // namespace kern::sys
