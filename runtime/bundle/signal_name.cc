// parse_signal (see signal_name.h).
#include "runtime/bundle/signal_name.h"

#include <csignal>
#include <cstring>

namespace kern::bundle {

namespace {
bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 3) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace

Result<int> parse_signal(const std::string& text) {
  auto bad = [&] { return fail(ErrorKind::usage, 0, "unknown signal \"" + text + "\""); };
  if (all_digits(text)) {
    int n = std::stoi(text);
    if (n < 0 || n > SIGRTMAX) return bad();  // 0 probes, as kill(2)'s: the container is there
    return n;
  }
  std::string name = text;
  for (auto& c : name) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  for (const char* rt : {"RTMIN", "RTMAX"}) {
    size_t n = std::strlen(rt);
    if (name.compare(0, n, rt) != 0) continue;
    int base = rt[2] == 'M' && rt[3] == 'I' ? SIGRTMIN : SIGRTMAX;
    if (name.size() == n) return base;
    std::string off = name.substr(n + 1);
    if ((name[n] != '+' && name[n] != '-') || !all_digits(off)) return bad();
    int sig = name[n] == '+' ? base + std::stoi(off) : base - std::stoi(off);
    if (sig < SIGRTMIN || sig > SIGRTMAX) return bad();
    return sig;
  }
  for (int s = 1; s < SIGRTMIN; ++s) {
    const char* abbrev = sigabbrev_np(s);
    if (abbrev && name == abbrev) return s;
  }
  return bad();
}

}  // namespace kern::bundle
