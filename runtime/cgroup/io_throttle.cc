// io.max lines and their read-back; see io_throttle.h. Pure: any process.
#include "runtime/cgroup/io_throttle.h"

#include <cstdlib>

namespace kern {
namespace {

struct Line {
  bool ok = false;
  uint32_t major = 0, minor = 0;
  std::optional<uint64_t> rbps, wbps, riops, wiops;  // nullopt: "max" or absent
};

// A decimal number and nothing else (enforcement.h's knob parser, which would also take "max"
// and a trailing newline).
bool number(std::string_view s, uint64_t* out) {
  if (s.empty() || s.back() == '\n' || s.back() == ' ') return false;
  KnobReading k = parse_limit_knob(s);
  if (k.state != KnobReading::value) return false;
  *out = k.number;
  return true;
}

Line parse_line(std::string_view l) {
  Line out;
  size_t sp = l.find(' ');
  std::string_view dev = l.substr(0, sp);
  size_t colon = dev.find(':');
  uint64_t ma = 0, mi = 0;
  if (colon == std::string_view::npos || !number(dev.substr(0, colon), &ma) || !number(dev.substr(colon + 1), &mi) ||
      ma > UINT32_MAX || mi > UINT32_MAX)
    return out;
  out.major = static_cast<uint32_t>(ma);
  out.minor = static_cast<uint32_t>(mi);
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : l.substr(sp + 1);
  while (!rest.empty()) {
    size_t e = rest.find(' ');
    std::string_view kv = rest.substr(0, e);
    rest = e == std::string_view::npos ? std::string_view() : rest.substr(e + 1);
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return out;
    std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    std::optional<uint64_t>* slot = k == "rbps" ? &out.rbps : k == "wbps" ? &out.wbps : k == "riops" ? &out.riops
                                  : k == "wiops" ? &out.wiops : nullptr;
    if (slot == nullptr) continue;  // keys of newer kernels
    uint64_t n = 0;
    if (v == "max") *slot = std::nullopt;
    else if (number(v, &n)) *slot = n;
    else return out;
  }
  out.ok = true;
  return out;
}

}  // namespace

std::string io_max_line(const IoThrottle& t) {
  std::string s = std::to_string(t.major) + ":" + std::to_string(t.minor);
  auto key = [&](const char* k, uint64_t v) {
    if (v != 0) s += std::string(" ") + k + "=" + std::to_string(v);
  };
  key("rbps", t.rbps);
  key("wbps", t.wbps);
  key("riops", t.riops);
  key("wiops", t.wiops);
  return s;
}

Verdict io_max_verdict(const std::vector<IoThrottle>& requested, std::optional<std::string_view> text) {
  if (requested.empty()) return Verdict::not_requested;
  if (!text) return Verdict::undetermined;
  std::vector<Line> lines;
  std::string_view t = *text;
  while (!t.empty()) {
    size_t e = t.find('\n');
    std::string_view l = t.substr(0, e);
    t = e == std::string_view::npos ? std::string_view() : t.substr(e + 1);
    if (l.empty()) continue;
    Line p = parse_line(l);
    if (!p.ok) return Verdict::undetermined;
    lines.push_back(p);
  }
  for (const IoThrottle& want : requested) {
    const Line* got = nullptr;
    for (const Line& l : lines)
      if (l.major == want.major && l.minor == want.minor) got = &l;
    if (got == nullptr) return Verdict::not_enforced;
    auto holds = [](uint64_t w, const std::optional<uint64_t>& g) { return w == 0 || (g && *g == w); };
    if (!holds(want.rbps, got->rbps) || !holds(want.wbps, got->wbps) || !holds(want.riops, got->riops) ||
        !holds(want.wiops, got->wiops))
      return Verdict::not_enforced;
  }
  return Verdict::enforced;
}

}  // namespace kern
