// Start-up phase timestamps, written by whichever process reaches a phase into one shared
// anonymous page mapped before clone (so the child's phases cost a store, not a message).
// Read by the launcher for KERN_TIMING and the report fd's "phases".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kern {

enum class Phase : int {
  start = 0,      // kern's main began (parent)
  spec,           // BoxSpec built (parent)
  prepared,       // cgroup, fds, plan ready (parent)
  cloned,         // clone3 returned (parent)
  idmapped,       // id maps written (parent)
  child_go,       // the child saw the go signal (child)
  mounted,        // mount plan done, pivot_root included (child)
  forked,         // the workload process runs (spawned by box init)
  exec,           // workload about to call execve (workload)
  confirmed,      // channel EOF seen (parent)
  count,
};

// Pure measurement: nothing reads it to decide anything (the box's channel carries decisions).
struct TimingPage {
  uint64_t ns[static_cast<int>(Phase::count)];
};

uint64_t monotonic_ns() noexcept;
// Maps the shared page (MAP_SHARED|MAP_ANONYMOUS); nullptr if mmap fails (timing is optional).
TimingPage* map_timing_page() noexcept;
void mark(TimingPage* page, Phase phase) noexcept;
// (phase name, milliseconds since the previous phase that was marked)
std::vector<std::pair<std::string, double>> phase_durations(const TimingPage& page);
std::string phase_name(Phase p);

}  // namespace kern
