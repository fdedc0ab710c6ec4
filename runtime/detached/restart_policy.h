// --restart for detached boxes (kern-box(1)): which exits the box's supervisor answers with a new
// box of the same name, and how long it waits first. Pure; the supervisor (supervisor_main.cc)
// acts on it.
//
// The spellings are Docker's and Podman's: no, on-failure[:N], always, unless-stopped. Within a
// supervisor's life `always` and `unless-stopped` are the same (kern has no daemon that restarts
// boxes it stopped); `kern generate systemd` is how a box comes back after a reboot.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/sys/error.h"

namespace kern {

enum class RestartMode { no, on_failure, always, unless_stopped };

struct RestartPolicy {
  RestartMode mode = RestartMode::no;
  unsigned max_restarts = 0;  // on-failure:N or --restart-max N; 0: no limit
};

// "no", "on-failure", "on-failure:N" (N >= 1), "always", "unless-stopped".
Result<RestartPolicy> parse_restart_policy(const std::string& text);
// The spelling parse_restart_policy takes ("on-failure:3").
std::string restart_policy_name(const RestartPolicy& p);

// Whether the box that exited with `exit_code` after `restarts` restarts so far gets a new one:
// never once `kern stop` (or a SIGTERM to the supervisor) asked it to end, nor past the limit;
// on-failure only for a non-zero code.
bool restart_wanted(const RestartPolicy& p, int exit_code, unsigned restarts, bool stop_requested);

// The wait before a restart, as Docker's: 100 ms, doubled after each box that did not run for
// kRestartResetMs, at most kRestartMaxDelayMs. `quick_exits`: how many boxes in a row ended sooner
// than that (1 for the first).
inline constexpr uint64_t kRestartResetMs = 10000;
inline constexpr uint64_t kRestartMaxDelayMs = 60000;
uint64_t restart_delay_ms(unsigned quick_exits);

}  // namespace kern
