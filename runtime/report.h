// The report fd (kern-box(1), ours): JSON lines, one "started" record at exec and one
// "exited" record at teardown,
// and with --egress-allow one "egress" record per proxied connection. Parent side. Pure builders plus one write each.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/cgroup/box_cgroup.h"
#include "runtime/cgroup/enforcement.h"

namespace kern {

struct StartedInfo {
  pid_t init_pid = 0;
  Enforcement enforcement;
  std::string id_map;
  std::vector<std::pair<std::string, double>> phases_ms;
  // Best-effort steps the box runs without (step, errno), as box init reported them.
  std::vector<std::pair<std::string, int>> skipped;
};

struct ExitedInfo {
  int exit_code = 0;
  int signal = 0;  // the workload's terminating signal, 0 if it exited
  bool timed_out = false;
  MemoryEvents events;
  double wall_ms = 0;
};

// One decision of the egress proxy (--egress-allow): written by the proxy process, once per
// connection, when the connection ends (allowed) or at the refusal.
struct EgressEvent {
  bool allowed = false;
  std::string method;   // "CONNECT", "GET", ...; empty when the head never parsed
  std::string host;     // as the box named it
  unsigned port = 0;
  std::string address;  // the address connected to, when one was
  std::string reason;   // why it was refused (or how an allowed connection ended)
  uint64_t bytes_out = 0;  // box -> server
  uint64_t bytes_in = 0;   // server -> box
};

std::string started_record(const BoxSpec& spec, const StartedInfo& info);
std::string exited_record(const BoxSpec& spec, const ExitedInfo& info);
std::string egress_record(const std::string& box_name, const EgressEvent& ev);
// Writes one line; a reader that went away is not kern's failure (EPIPE ignored).
void write_report_line(int fd, const std::string& json_line);

}  // namespace kern
