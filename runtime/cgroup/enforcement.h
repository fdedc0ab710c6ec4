// What the kernel really enforces for one box, read back from cgroup files (never assumed).
// Pure data plus the pure verdict rules; the reading lives in box_cgroup.cc, which feeds the
// values it found (or could not find) into the functions below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/box_spec.h"

namespace kern {

enum class Verdict {
  not_requested,
  undetermined,  // could not be read
  enforced,
  not_enforced,  // requested, but the kernel does not hold it
};

std::string verdict_name(Verdict v);  // "not_requested", "undetermined", "enforced", "not_enforced"

struct Enforcement {
  Verdict memory = Verdict::undetermined;
  Verdict pids = Verdict::undetermined;
  Verdict cpu = Verdict::not_requested;
  Verdict cpuset = Verdict::not_requested;
  Verdict io = Verdict::not_requested;
  Verdict devices = Verdict::not_requested;
  std::optional<uint64_t> memory_max;  // the tightest memory.max on the box's cgroup path
  std::optional<uint64_t> pids_max;    // the tightest pids.max on the box's cgroup path
  std::optional<double> cpus;          // cpu.max of the box's cgroup as a CPU amount
  std::string cgroup_path;  // empty: no per-box cgroup
};

// Byte 1 of the started fd (kern-box(1)): 0 undetermined, 1 enforced, 2 requested but not
// enforced. A box without any memory request under KERN_NO_SCOPE reports 0.
uint8_t started_memory_byte(const Enforcement& e);

// Built-in defaults, applied only when the box gets a cgroup (kern-box(1)).
inline constexpr uint64_t kDefaultMemoryMax = 512ull * 1024 * 1024;
inline constexpr uint64_t kDefaultMemorySwapMax = 0;
inline constexpr uint64_t kDefaultPidsMax = 512;
inline constexpr uint64_t kCpuPeriodUs = 100000;

// What the box's cgroup is asked to hold: the request with the defaults filled in.
uint64_t effective_memory_max(const Limits& l);
uint64_t effective_swap_max(const Limits& l);
uint64_t effective_pids_max(const Limits& l);
// cpu.max quota in microseconds per kCpuPeriodUs, the request clamped to `host_cpus`
// (>= 1) and to the kernel's 1000 us minimum.
uint64_t cpu_quota_us(double cpus, unsigned host_cpus);

// The verdicts of a box that runs without a cgroup. The default caps belong to a cgroup and do
// not count as requested here; a cap asked for explicitly (flag or profile) is not_enforced.
Enforcement uncapped_enforcement(const Limits& l);

// Whether --require-limits is satisfied: memory and pids both read back as enforced.
bool limits_in_force(const Enforcement& e);

// One value read from a cgroup knob along the box's path (box first, then each ancestor up to,
// not including, the root of the mount; the root has no limits).
struct KnobReading {
  enum State { value, unlimited, absent, unreadable } state = unreadable;
  uint64_t number = 0;  // for State::value
};

// "max" -> unlimited, "1234\n" -> value, anything else -> unreadable.
KnobReading parse_limit_knob(std::string_view text);

// The verdict for a "this or less" cap such as memory.max or pids.max: enforced when some level
// holds a value at or below `requested`; not_enforced when every level was read and none does
// (a missing file means the controller is off there: known, nothing held); undetermined when a
// level could not be read and none that could be read holds. `tightest` gets the smallest value.
Verdict cap_verdict(uint64_t requested, const std::vector<KnobReading>& levels,
                    std::optional<uint64_t>* tightest);

// cpu.max of the box's cgroup ("50000 100000", "max 100000"): enforced when the quota is at or
// below what was asked for (a slack of 1%, the kernel stores microseconds).
Verdict cpu_verdict(std::optional<double> requested, std::optional<std::string_view> cpu_max,
                    unsigned host_cpus, std::optional<double>* read_cpus);

// cpuset.cpus.effective against the requested list: enforced when the effective set is a
// non-empty subset of the request.
Verdict cpuset_verdict(const std::string& requested, std::optional<std::string_view> effective);

}  // namespace kern
