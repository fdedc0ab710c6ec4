// What the lifecycle verbs (logs, attach, wait, kill, stop, rm, inspect) share: finding a box's
// record by name, asking a detached box's supervisor, and the inspect document (pure).
#pragma once

#include <string>

#include "runtime/registry.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::cli {

// The record of box NAME, live or exited (stale records are reaped on the way).
Result<BoxRecord> find_box(const std::string& runtime_dir, const std::string& name);
// Opens box NAME's socket and sends `request` (one line, without the newline).
Result<UniqueFd> ask_box(const std::string& runtime_dir, const std::string& name, const std::string& request);
// Sends signal `sig` to a running box: through a detached box's supervisor (which holds box
// init's pidfd), else to a foreground box's launcher (which forwards it). `stop`: kern stop's
// and rm -f's signal, which also ends a detached box's restart policy.
Status signal_box(const std::string& runtime_dir, const BoxRecord& rec, int sig, bool stop = false);
// Waits up to `ms` for box NAME to stop running (exited, or gone); true when it has.
bool wait_not_running(const std::string& runtime_dir, const std::string& name, unsigned ms);
// `kern inspect`'s object for one record. Pure.
std::string inspect_json(const BoxRecord& rec, const std::string& log_path);
// "SIGTERM", "TERM", "term" or "15" -> 15; 0 when not a signal.
int parse_signal(const std::string& text);
// "SIGTERM"; "signal N" for a number Linux has no name for.
std::string signal_name(int sig);

}  // namespace kern::cli
