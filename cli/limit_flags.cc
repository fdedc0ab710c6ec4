// The limit flags and their one builder; see limit_flags.h.
#include "cli/limit_flags.h"

#include <unistd.h>

#include <cstdlib>

#include "cli/usage_errors.h"
#include "profiles/units.h"
#include "runtime/sys/env.h"
#include "runtime/sys/log.h"

namespace kern::cli {

void add_limit_flags(CLI::App* c, LimitOptions& o, const FlagFilter& f) {
  add_option(c, f, "-m,--memory", o.memory, "memory.max (default 512 MiB with a cgroup)");
  add_option(c, f, "--memory-swap-max", o.memory_swap, "memory.swap.max (default 0)");
  add_option(c, f, "--memory-swap", o.memory_swap_total, "docker's: memory plus swap (needs -m; -1 = unlimited swap)");
  add_option(c, f, "--cpus", o.cpus, "cpu.max quota in CPUs");
  add_option(c, f, "--cpuset-cpus", o.cpuset, "CPUs to pin to");
  add_option(c, f, "--pids-limit", o.pids, "pids.max (>= 2, default 512)");
  add_io_flags(c, o.io, f);
  add_flag(c, f, "--require-limits", o.require_limits, "refuse to start without memory and pids caps");
  add_flag(c, f, "--allow-uncapped", o.allow_uncapped, "run silently where no cgroup can be had");
}

Status build_limits(const LimitOptions& o, BoxSpec& spec, ExplicitFlags& ex) {
  Limits& l = spec.limits;
  if (o.memory) {
    if (o.memory->empty()) return fail(empty_value("-m/--memory", "a size such as 512m", "the default, 512 MiB"));
    KERN_TRY_ASSIGN(l.memory_max, profiles::parse_memory(*o.memory));
    ex.memory = true;
  }
  if (!o.memory_swap.empty()) {
    KERN_TRY_ASSIGN(l.memory_swap_max, profiles::parse_size(o.memory_swap));
    ex.memory_swap = true;
  }
  if (!o.memory_swap_total.empty()) {
    const std::string& t = o.memory_swap_total;
    if (!o.memory_swap.empty())
      return fail(Error(ErrorKind::usage, 0, "--memory-swap and --memory-swap-max exclude each other")
                      .with_hint("--memory-swap is memory plus swap, --memory-swap-max the swap alone: give one"));
    if (!o.memory)
      return fail(Error(ErrorKind::usage, 0, "--memory-swap " + log::sanitize(t) + " needs -m/--memory")
                      .with_hint("--memory-swap is the memory and the swap together, as in docker run; "
                                 "--memory-swap-max SIZE caps the swap alone"));
    if (t == "-1") {
      l.memory_swap_max = kSwapUnlimited;
    } else {
      auto total = profiles::parse_size(t);
      if (!total) return fail(Error(ErrorKind::usage, 0, "--memory-swap: " + total.error().message()));
      if (*total < *l.memory_max)
        return fail(Error(ErrorKind::usage, 0, "--memory-swap " + log::sanitize(t) + " is below -m " +
                                                   log::sanitize(*o.memory))
                        .with_hint("--memory-swap is the memory and the swap together: at least the memory"));
      l.memory_swap_max = *total - *l.memory_max;
    }
    ex.memory_swap = true;
  }
  if (!o.cpus.empty()) {
    KERN_TRY_ASSIGN(double c, profiles::parse_cpus(o.cpus));
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0 && c > static_cast<double>(n)) {
      log::note("--cpus " + o.cpus + " clamped to this host's " + std::to_string(n) + " CPUs");
      c = static_cast<double>(n);
    }
    l.cpus = c;
    ex.cpus = true;
  }
  if (!o.cpuset.empty()) {
    KERN_TRY_ASSIGN(auto list, profiles::parse_cpu_list(o.cpuset));
    l.cpuset_cpus = profiles::format_cpu_list(list);
    ex.cpuset = true;
  }
  if (!o.pids.empty()) {
    KERN_TRY_ASSIGN(l.pids_max, profiles::parse_pids(o.pids));
    ex.pids = true;
  }
  KERN_TRY(build_io_limits(o.io, l.io_max));
  bool require = o.require_limits || sys::env_set("KERN_REQUIRE_LIMITS");
  bool uncapped = o.allow_uncapped || sys::env_set("KERN_ALLOW_UNCAPPED");
  if (require && uncapped)
    return fail(Error(ErrorKind::usage, 0,
                      std::string(o.require_limits ? "--require-limits" : "KERN_REQUIRE_LIMITS") + " and " +
                          (o.allow_uncapped ? "--allow-uncapped" : "KERN_ALLOW_UNCAPPED") + " exclude each other"));
  if (sys::env_set("KERN_NO_SCOPE")) spec.cgroup_policy = CgroupPolicy::none;
  if (require) spec.cgroup_policy = CgroupPolicy::require;
  else if (uncapped && spec.cgroup_policy != CgroupPolicy::none) spec.cgroup_policy = CgroupPolicy::allow_uncapped;
  return {};
}

}  // namespace kern::cli
