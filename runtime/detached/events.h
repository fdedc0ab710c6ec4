// The event log of detached boxes (`kern events`): one JSON line per event, appended by each box's
// supervisor to <runtime>/events.jsonl (O_APPEND, each line well under PIPE_BUF: lines of several
// supervisors never interleave), rotated once past kEventLogMax. Events: start (a box of the name
// runs), die (it ended: exit_code), oom (the kernel's OOM killer hit it), restart (a new box comes
// after the back-off: restart_count), health_status (status), stop (kern stop asked).
#pragma once

#include <cstdint>
#include <string>

namespace kern {

inline constexpr uint64_t kEventLogMax = 1 << 20;  // then events.jsonl becomes events.jsonl.1

std::string event_log_path(const std::string& runtime_dir);

// Appends {"time_ns": ..., "type": TYPE, "name": NAME, EXTRA...} (`extra_json`: "" or the
// members of a JSON object without braces, `"exit_code":1`). Best effort: an event that cannot be
// written is lost, the box goes on.
void append_event(const std::string& runtime_dir, const std::string& type, const std::string& name,
                  const std::string& extra_json = "");

}  // namespace kern
