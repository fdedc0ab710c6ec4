// Start-up phase timestamps; see timing.h.
#include "runtime/timing.h"

#include <sys/mman.h>
#include <time.h>

namespace kern {

uint64_t monotonic_ns() noexcept {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

TimingPage* map_timing_page() noexcept {
  void* p = mmap(nullptr, sizeof(TimingPage), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return static_cast<TimingPage*>(p);
}

void mark(TimingPage* page, Phase phase) noexcept {
  if (page != nullptr) page->ns[static_cast<int>(phase)] = monotonic_ns();
}

std::string phase_name(Phase p) {
  switch (p) {
    case Phase::start: return "start";
    case Phase::spec: return "spec";
    case Phase::prepared: return "prepare";
    case Phase::cloned: return "clone";
    case Phase::idmapped: return "idmap";
    case Phase::child_go: return "child_go";
    case Phase::mounted: return "mounts";
    case Phase::forked: return "fork";
    case Phase::exec: return "exec";
    case Phase::confirmed: return "confirmed";
    case Phase::count: break;
  }
  return "?";
}

std::vector<std::pair<std::string, double>> phase_durations(const TimingPage& page) {
  std::vector<std::pair<std::string, double>> out;
  uint64_t prev = page.ns[0];
  for (int i = 1; i < static_cast<int>(Phase::count); ++i) {
    uint64_t t = page.ns[i];
    if (t == 0 || prev == 0) continue;
    out.emplace_back(phase_name(static_cast<Phase>(i)), static_cast<double>(t - prev) / 1e6);
    prev = t;
  }
  return out;
}

}  // namespace kern
