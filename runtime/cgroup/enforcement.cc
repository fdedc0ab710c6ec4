// Verdict rules, the started-fd memory byte and the built-in defaults; see enforcement.h.
// Pure: any process.
#include "runtime/cgroup/enforcement.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace kern {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::not_requested: return "not_requested";
    case Verdict::undetermined: return "undetermined";
    case Verdict::enforced: return "enforced";
    case Verdict::not_enforced: return "not_enforced";
  }
  return "undetermined";
}

uint8_t started_memory_byte(const Enforcement& e) {
  switch (e.memory) {
    case Verdict::enforced: return 1;
    case Verdict::not_enforced: return 2;
    default: return 0;
  }
}

uint64_t effective_memory_max(const Limits& l) { return l.memory_max.value_or(kDefaultMemoryMax); }
uint64_t effective_swap_max(const Limits& l) { return l.memory_swap_max.value_or(kDefaultMemorySwapMax); }
uint64_t effective_pids_max(const Limits& l) { return l.pids_max.value_or(kDefaultPidsMax); }

uint64_t cpu_quota_us(double cpus, unsigned host_cpus) {
  double c = std::min(cpus, static_cast<double>(std::max(1u, host_cpus)));
  double q = std::floor(c * static_cast<double>(kCpuPeriodUs) + 0.5);
  return std::max<uint64_t>(1000, static_cast<uint64_t>(q));
}

Enforcement uncapped_enforcement(const Limits& l) {
  Enforcement e;
  e.memory = l.memory_max ? Verdict::not_enforced : Verdict::not_requested;
  e.pids = l.pids_max ? Verdict::not_enforced : Verdict::not_requested;
  e.cpu = l.cpus ? Verdict::not_enforced : Verdict::not_requested;
  e.cpuset = l.cpuset_cpus.empty() ? Verdict::not_requested : Verdict::not_enforced;
  e.io = l.io_max.empty() ? Verdict::not_requested : Verdict::not_enforced;
  return e;
}

bool limits_in_force(const Enforcement& e) {
  return e.memory == Verdict::enforced && e.pids == Verdict::enforced;
}

KnobReading parse_limit_knob(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  KnobReading r;
  if (text == "max") {
    r.state = KnobReading::unlimited;
    return r;
  }
  if (text.empty() || text.size() > 20) return r;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return r;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (n > (UINT64_MAX - d) / 10) return r;
    n = n * 10 + d;
  }
  r.state = KnobReading::value;
  r.number = n;
  return r;
}

Verdict cap_verdict(uint64_t requested, const std::vector<KnobReading>& levels,
                    std::optional<uint64_t>* tightest) {
  bool unknown = levels.empty();
  std::optional<uint64_t> best;
  for (const KnobReading& r : levels) {
    if (r.state == KnobReading::value) best = best ? std::min(*best, r.number) : r.number;
    if (r.state == KnobReading::unreadable) unknown = true;
  }
  if (tightest) *tightest = best;
  if (best && *best <= requested) return Verdict::enforced;
  return unknown ? Verdict::undetermined : Verdict::not_enforced;
}

Verdict cpu_verdict(std::optional<double> requested, std::optional<std::string_view> cpu_max,
                    unsigned host_cpus, std::optional<double>* read_cpus) {
  if (!requested) return Verdict::not_requested;
  if (!cpu_max) return Verdict::undetermined;
  std::string_view s = *cpu_max;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos) return Verdict::undetermined;
  KnobReading quota = parse_limit_knob(s.substr(0, sp));
  KnobReading period = parse_limit_knob(s.substr(sp + 1));
  if (period.state != KnobReading::value || period.number == 0) return Verdict::undetermined;
  if (quota.state == KnobReading::unlimited) return Verdict::not_enforced;
  if (quota.state != KnobReading::value) return Verdict::undetermined;
  double got = static_cast<double>(quota.number) / static_cast<double>(period.number);
  if (read_cpus) *read_cpus = got;
  double want = static_cast<double>(cpu_quota_us(*requested, host_cpus)) / static_cast<double>(kCpuPeriodUs);
  return got <= want * 1.01 ? Verdict::enforced : Verdict::not_enforced;
}

namespace {
// "0-3,5" -> sorted list; empty on a parse error.
std::vector<unsigned> cpu_list(std::string_view s) {
  std::vector<unsigned> out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  size_t i = 0;
  while (i < s.size()) {
    size_t end = s.find(',', i);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(i, end - i);
    size_t dash = part.find('-');
    std::string a(part.substr(0, dash));
    std::string b(dash == std::string_view::npos ? a : std::string(part.substr(dash + 1)));
    char* e1 = nullptr;
    char* e2 = nullptr;
    unsigned long lo = std::strtoul(a.c_str(), &e1, 10), hi = std::strtoul(b.c_str(), &e2, 10);
    if (a.empty() || b.empty() || *e1 || *e2 || hi < lo || hi > 65535) return {};
    for (unsigned long c = lo; c <= hi; ++c) out.push_back(static_cast<unsigned>(c));
    i = end + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

Verdict cpuset_verdict(const std::string& requested, std::optional<std::string_view> effective) {
  if (requested.empty()) return Verdict::not_requested;
  if (!effective) return Verdict::undetermined;
  std::vector<unsigned> want = cpu_list(requested), got = cpu_list(*effective);
  if (want.empty() || got.empty()) return Verdict::undetermined;
  return std::includes(want.begin(), want.end(), got.begin(), got.end()) ? Verdict::enforced
                                                                         : Verdict::not_enforced;
}

}  // namespace kern
