// Parsing and formatting of sizes, CPU amounts and CPU lists; see units.h.
#include "profiles/units.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "runtime/sys/human_size.h"
#include "runtime/sys/log.h"

namespace kern::profiles {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Exact decimal "I.F" (at most 9 fraction digits) as integer part and nanounits.
struct Decimal {
  uint64_t whole = 0;
  uint64_t nano = 0;  // fraction * 1e9
  size_t end = 0;     // index after the number
};

bool parse_decimal(std::string_view s, Decimal& d) {
  size_t i = 0;
  if (i >= s.size() || !is_digit(s[i])) return false;
  while (i < s.size() && is_digit(s[i])) {
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (d.whole > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    d.whole = d.whole * 10 + digit;
    ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t digits = 0;
    uint64_t scale = 100000000;
    if (i >= s.size() || !is_digit(s[i])) return false;
    while (i < s.size() && is_digit(s[i])) {
      if (++digits > 9) return false;
      d.nano += static_cast<uint64_t>(s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
  }
  d.end = i;
  return true;
}

Unexpected<Error> bad(std::string msg) { return fail(ErrorKind::config, 0, std::move(msg)); }

}  // namespace

Result<uint64_t> parse_size(std::string_view text) {
  auto invalid = [&] {
    return bad("bad size " + log::quoted(text) +
               ": expected bytes or a number with a k, m, g or t suffix (binary), e.g. 512m or \"256 MB\"");
  };
  Decimal d;
  if (!parse_decimal(text, d)) return invalid();
  std::string_view rest = text.substr(d.end);
  // "256 MB" as well as "256MB": spaces between the number and a unit, never after it.
  size_t spaces = 0;
  while (spaces < rest.size() && rest[spaces] == ' ') ++spaces;
  if (spaces > 0 && spaces < rest.size()) rest.remove_prefix(spaces);
  uint64_t mult = 1;
  if (!rest.empty()) {
    switch (rest[0]) {
      case 'k': case 'K': mult = kKiB; rest.remove_prefix(1); break;
      case 'm': case 'M': mult = kMiB; rest.remove_prefix(1); break;
      case 'g': case 'G': mult = kGiB; rest.remove_prefix(1); break;
      case 't': case 'T': mult = kTiB; rest.remove_prefix(1); break;
      default: break;
    }
    if (mult != 1 && (rest == "ib" || rest == "iB" || rest == "Ib" || rest == "IB")) rest = {};
    if (rest == "b" || rest == "B") rest = {};
    if (!rest.empty()) return invalid();
  }
  if (d.nano != 0 && mult == 1) return bad("bad size " + log::quoted(text) + ": a byte count has no fraction");
  if (d.whole > std::numeric_limits<uint64_t>::max() / mult)
    return bad("size " + log::quoted(text) + " is too large");
  uint64_t bytes = d.whole * mult;
  // Fraction: nano/1e9 of `mult`, rounded down to a whole byte.
  unsigned __int128 frac = static_cast<unsigned __int128>(d.nano) * mult / 1000000000u;
  if (bytes > std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(frac))
    return bad("size " + log::quoted(text) + " is too large");
  return bytes + static_cast<uint64_t>(frac);
}

Status check_memory(uint64_t bytes) {
  if (bytes < kMinMemory) {
    std::string msg = "memory " + format_size(bytes) + " is below the minimum of " +
                      format_size(kMinMemory);
    if (bytes > 0 && bytes < 64 * kKiB)
      msg += " (a bare number is bytes: did you mean " + std::to_string(bytes) + "m?)";
    return bad(msg);
  }
  if (bytes > kMaxSize) return bad("memory " + format_size(bytes) + " is above the maximum of 1 PiB");
  return {};
}

Result<uint64_t> parse_memory(std::string_view text) {
  KERN_TRY_ASSIGN(uint64_t bytes, parse_size(text));
  KERN_TRY(check_memory(bytes));
  return bytes;
}

Status check_disk_size(uint64_t bytes) {
  if (bytes < kMinDiskSize) {
    std::string msg = "size " + format_size(bytes) + " is below the minimum of " + format_size(kMinDiskSize);
    if (bytes > 0 && bytes < kMinDiskSize)
      msg += " (a bare number is bytes: did you mean " + std::to_string(bytes) + "m?)";
    return bad(msg);
  }
  if (bytes > kMaxSize) return bad("size " + format_size(bytes) + " is above the maximum of 1 PiB");
  return {};
}

Status check_cpus(double cpus) {
  if (!std::isfinite(cpus) || cpus < kMinCpus || cpus > kMaxCpus)
    return bad("cpus " + format_cpus(cpus) + " is out of range: expected " + format_cpus(kMinCpus) +
               " to " + format_cpus(kMaxCpus));
  return {};
}

Result<double> parse_cpus(std::string_view text) {
  Decimal d;
  if (!parse_decimal(text, d) || d.end != text.size())
    return bad("bad cpu amount " + log::quoted(text) + ": expected a decimal number such as 1.5 or 0.2");
  if (d.whole > 1000000) return bad("cpu amount " + log::quoted(text) + " is out of range");
  double v = static_cast<double>(d.whole) + static_cast<double>(d.nano) / 1e9;
  KERN_TRY(check_cpus(v));
  return v;
}

Result<uint64_t> parse_pids(std::string_view text) {
  Decimal d;
  if (!parse_decimal(text, d) || d.end != text.size() || d.nano != 0)
    return bad("bad pids limit " + log::quoted(text) + ": expected a whole number");
  if (d.whole < kMinPids || d.whole > kMaxPids)
    return bad("pids limit " + log::quoted(text) + " is out of range: expected 2 to 4194304");
  return d.whole;
}

Result<uint64_t> parse_bps(std::string_view text) {
  KERN_TRY_ASSIGN(uint64_t n, parse_size(text));
  if (n == 0) return bad("rate " + log::quoted(text) + " must be above 0 bytes per second");
  return n;
}

Result<uint64_t> parse_iops(std::string_view text) {
  Decimal d;
  if (!parse_decimal(text, d) || d.end != text.size() || d.nano != 0)
    return bad("bad rate " + log::quoted(text) + ": expected a whole number of operations per second");
  if (d.whole == 0) return bad("rate " + log::quoted(text) + " must be above 0 operations per second");
  return d.whole;
}

Result<uint64_t> parse_duration_ms(std::string_view text) {
  Decimal d;
  std::string expected = ": expected seconds, or a number with ms, s, m or h (2s, 500ms, 1m)";
  if (!parse_decimal(text, d)) return bad("bad duration " + log::quoted(text) + expected);
  std::string_view unit = text.substr(d.end);
  uint64_t scale;
  if (unit.empty() || unit == "s") scale = 1000;
  else if (unit == "ms") scale = 1;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else return bad("bad duration " + log::quoted(text) + expected);
  if (d.whole > kMaxTimeoutMs / scale) return bad("duration " + log::quoted(text) + " is too long: at most 30 days");
  // nano is the fraction times 1e9; times scale (ms per unit) it is in units of 1e-9 ms.
  unsigned __int128 frac = static_cast<unsigned __int128>(d.nano) * scale;
  if (frac % 1'000'000'000u != 0)
    return bad("duration " + log::quoted(text) + " is not a whole number of milliseconds");
  uint64_t ms = d.whole * scale + static_cast<uint64_t>(frac / 1'000'000'000u);
  if (ms > kMaxTimeoutMs) return bad("duration " + log::quoted(text) + " is too long: at most 30 days");
  return ms;
}

std::string format_duration_ms(uint64_t ms) {
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  return std::to_string(ms / 1000) + "s";
}

Result<std::vector<unsigned>> parse_cpu_list(std::string_view text) {
  auto invalid = [&](const std::string& why) {
    return bad("bad CPU list " + log::quoted(text) + ": " + why + " (expected e.g. 0-3,5)");
  };
  if (text.empty()) return invalid("empty");
  std::vector<unsigned> out;
  size_t i = 0;
  auto number = [&](unsigned& v) -> bool {
    if (i >= text.size() || !is_digit(text[i])) return false;
    uint64_t n = 0;
    while (i < text.size() && is_digit(text[i])) {
      n = n * 10 + static_cast<uint64_t>(text[i] - '0');
      if (n > kMaxCpuIndex) return false;
      ++i;
    }
    v = static_cast<unsigned>(n);
    return true;
  };
  while (true) {
    unsigned lo = 0, hi = 0;
    if (!number(lo)) return invalid("expected a CPU number at offset " + std::to_string(i));
    hi = lo;
    if (i < text.size() && text[i] == '-') {
      ++i;
      if (!number(hi)) return invalid("expected a CPU number at offset " + std::to_string(i));
      if (hi < lo) return invalid("range " + std::to_string(lo) + "-" + std::to_string(hi) + " is descending");
    }
    for (unsigned c = lo; c <= hi; ++c) {
      if (!out.empty() && c <= out.back()) return invalid("CPU " + std::to_string(c) + " is listed twice or out of order");
      out.push_back(c);
    }
    if (i == text.size()) break;
    if (text[i] != ',') return invalid("unexpected character at offset " + std::to_string(i));
    ++i;
  }
  return out;
}

std::string format_cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string format_size(uint64_t bytes) { return sys::human_size(bytes); }

std::string format_cpus(double cpus) { return sys::short_decimal(cpus); }

}  // namespace kern::profiles
