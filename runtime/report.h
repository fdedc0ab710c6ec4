// The report fd (CONTRACT section 3, ours): JSON lines, one "started" record at exec and one
// "exited" record at teardown. Parent side. Pure builders plus one write each.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/cgroup.h"
#include "runtime/enforcement.h"

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

std::string started_record(const BoxSpec& spec, const StartedInfo& info);
std::string exited_record(const BoxSpec& spec, const ExitedInfo& info);
// Writes one line; a reader that went away is not kern's failure (EPIPE ignored).
void write_report_line(int fd, const std::string& json_line);

}  // namespace kern
