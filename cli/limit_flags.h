// The resource-limit flags shared by `kern box`, `kern kernel start` and `kern run` (
// kern-box(1), kern.toml(5)), and the one builder that turns them, with KERN_REQUIRE_LIMITS,
// KERN_ALLOW_UNCAPPED and KERN_NO_SCOPE, into the spec's Limits and cgroup policy.
#pragma once

#include "cli/cli11.h"

#include <cstdint>
#include <optional>
#include <string>

#include "cli/flag_filter.h"
#include "cli/io_limits.h"
#include "cli/profile_apply.h"
#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct LimitOptions {
  std::optional<std::string> memory;  // as given: an empty value is refused, not taken as unset
  std::string memory_swap, cpus, cpuset, pids;  // as given, "" when absent
  std::string memory_swap_total;  // --memory-swap (Docker's: memory plus swap, -1 = unlimited swap)
  IoFlags io;  // --device-read-bps and the like (io.max)
  bool require_limits = false, allow_uncapped = false;
};

// -m/--memory, --memory-swap-max, --memory-swap, --cpus, --cpuset-cpus, --pids-limit, the io.max flags,
// --require-limits and --allow-uncapped.
void add_limit_flags(CLI::App* c, LimitOptions& o, const FlagFilter& f = FlagFilter());

// Parses the flags into spec.limits (marking each in `ex`: an explicit flag beats a profile),
// turns Docker's --memory-swap TOTAL (which needs -m) into memory.swap.max = TOTAL - memory
// (equal: no swap; -1: unlimited, written as the largest number, which the kernel reads as
// "max"; exclusive with --memory-swap-max), clamps --cpus to this host's CPUs with a note, and sets spec.cgroup_policy from the flags
// and the environment. --require-limits and --allow-uncapped, as flags or variables in any
// mix, exclude each other (a usage error).
Status build_limits(const LimitOptions& o, BoxSpec& spec, ExplicitFlags& ex);

// memory.swap.max for --memory-swap -1.
inline constexpr uint64_t kSwapUnlimited = UINT64_MAX;

}  // namespace kern::cli
