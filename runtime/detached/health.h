// Health checks of a detached box (kern-box(1)): a command run inside the box through kern exec
// (the workload's own lockdown) every interval; exit 0 is healthy. The status is "starting" until
// the first success, "unhealthy" after `retries` failures in a row (failures within the start
// period do not count), "healthy" after any success, as Docker has it. Pure: the supervisor
// (supervisor_loop.cc) runs the probes and acts on an unhealthy box as `on_failure` says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern {

enum class HealthAction { none, kill, restart, stop };

struct HealthConfig {
  std::vector<std::string> test;  // the probe's argv (--health-cmd: /bin/sh -c CMD); empty: none
  uint64_t interval_ms = 30000;
  uint64_t timeout_ms = 30000;
  uint64_t start_period_ms = 0;
  unsigned retries = 3;
  HealthAction on_failure = HealthAction::none;
  bool enabled() const { return !test.empty(); }
};

struct HealthResult {
  int64_t start_unix = 0;
  int exit_code = 0;     // the probe's; -1: it ran out of time and was killed
  std::string output;    // its first 4 KiB of output, both streams
};

struct HealthState {
  std::string status = "starting";  // "starting", "healthy", "unhealthy"
  unsigned failing_streak = 0;
  std::vector<HealthResult> log;    // the last kHealthLogSize results, oldest first
};
inline constexpr size_t kHealthLogSize = 5;
inline constexpr size_t kHealthOutputMax = 4096;

// The state after a probe that ended `since_start_ms` after the box started. True when the
// status changed.
bool record_probe(HealthState& s, const HealthConfig& c, HealthResult r, uint64_t since_start_ms);

// "none", "kill", "restart", "stop" (Podman's --health-on-failure).
Result<HealthAction> parse_health_action(const std::string& text);
const char* health_action_name(HealthAction a);

// The record's and kern inspect's object: {"status", "failing_streak", "log": [...]}.
std::string health_json(const HealthState& s);

}  // namespace kern
