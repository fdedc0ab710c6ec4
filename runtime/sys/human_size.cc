// Byte counts for messages; see human_size.h.
#include "runtime/sys/human_size.h"

#include <cmath>
#include <cstdio>

namespace kern::sys {

std::string human_size(uint64_t bytes) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  std::string s = buf;
  // "1.50 GiB" -> "1.5 GiB"
  auto sp = s.find(' ');
  if (s.find('.') != std::string::npos && sp != std::string::npos) {
    size_t k = sp;
    while (k > 0 && s[k - 1] == '0') --k;
    if (k > 0 && s[k - 1] == '.') --k;
    s.erase(k, sp - k);
  }
  return s;
}

std::string short_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace kern::sys
