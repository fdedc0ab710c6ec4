// What the kernel really enforces for one box, read back from cgroup files (never assumed).
// Pure data plus the pure verdict rules; the reading lives in cgroup.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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
  std::optional<uint64_t> pids_max;
  std::string cgroup_path;  // empty: no per-box cgroup
};

// Byte 1 of the started fd (CONTRACT section 3): 0 undetermined, 1 enforced, 2 requested but not
// enforced. A box without any memory request under KERN_NO_SCOPE reports 0.
uint8_t started_memory_byte(const Enforcement& e);

}  // namespace kern
