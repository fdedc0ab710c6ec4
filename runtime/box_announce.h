// What a client of the BoxHandle tells the world about its box, once it has started and once it
// has exited: the registry record, the enforcement read back from the cgroup, the started fd's
// two bytes, the skipped-step warnings, the report fd's records, the KERN_TIMING line. Shared by
// the foreground `kern box` (launcher.cc) and a detached box's supervisor (runtime/detached/).
// Launcher side (whichever process owns the handle).
#pragma once

#include <cstdint>

#include "runtime/box_handle.h"
#include "runtime/box_spec.h"
#include "runtime/cgroup/enforcement.h"
#include "runtime/registry.h"
#include "runtime/report.h"
#include "runtime/timing.h"

namespace kern {

// The registry record of a box that has just started, owned by this process.
BoxRecord started_box_record(const BoxSpec& spec, const BoxHandle& box);
// -p as kern ps shows it: "HOSTIP:HOSTPORT->BOXPORT/PROTO" ("0.0.0.0:8080->80/tcp").
std::string published_port_text(const PortPublish& p);

// Reads the enforcement back, writes the started fd's bytes, warns about skipped steps, writes
// the started record to the report fd and prints the timing line (KERN_TIMING). Returns the
// enforcement that was read back.
Enforcement announce_started(const BoxSpec& spec, const BoxHandle& box, TimingPage* timing);

// The exited record's facts; the cgroup's counters are read only when a report fd wants them.
// `start_ns` is monotonic_ns() when the client began.
ExitedInfo exited_info(const BoxSpec& spec, const BoxHandle& box, const BoxExit& bx, bool timed_out,
                       uint64_t start_ns);
// Writes the exited record to the report fd, if there is one.
void announce_exited(const BoxSpec& spec, const ExitedInfo& info);

}  // namespace kern
