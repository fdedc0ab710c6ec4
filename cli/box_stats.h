// What a running box uses, for `kern stats` and `kern top`: read from its cgroup where it has one
// (cpu.stat, memory.current and memory.max, pids.current and pids.max, io.stat), else from /proc
// for its processes (box init and every descendant: utime+stime, resident memory, the count,
// read_bytes/write_bytes), with the source said; the network from the box's own
// /proc/INIT/net/dev (its namespace's interfaces but lo). Runs in the verb's process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/go_template.h"
#include "runtime/registry.h"

namespace kern::cli {

struct BoxUsage {
  std::string name;
  std::string source;      // "cgroup" or "proc"
  uint64_t cpu_usec = 0;   // CPU time used so far
  uint64_t memory = 0;     // bytes: memory.current, or the processes' resident set
  std::optional<uint64_t> memory_limit;  // memory.max when the cgroup has one
  uint64_t pids = 0;
  std::optional<uint64_t> pids_limit;
  uint64_t net_rx = 0, net_tx = 0;       // bytes, every interface of the box's namespace but lo
  uint64_t block_read = 0, block_write = 0;
  double cpu_percent = 0;  // over the sampling interval, 100 = one CPU
};

// The processes of a box: box init's pid and every descendant, init first.
std::vector<pid_t> box_processes(pid_t init);

// One reading of a live box (cpu_percent left 0).
BoxUsage read_usage(const BoxRecord& rec);
// cpu_percent of `now` from the reading `before`, `interval_ns` earlier.
void set_cpu_percent(BoxUsage& now, const BoxUsage& before, uint64_t interval_ns);

// A reading of each box, `wait()`, and a second one: the second readings with cpu_percent over
// the time between. An empty list when `wait()` says false (the caller is done).
std::vector<BoxUsage> sample_usage(const std::vector<BoxRecord>& boxes, const std::function<bool()>& wait);

std::string usage_json(const std::vector<BoxUsage>& u);
std::string usage_table(const std::vector<BoxUsage>& u);

// The rows of kern stats --format (cli/go_template.h), Docker's fields as docker stats prints
// them: .Name .ID (the name too) .CPUPerc ("0.52%") .MemUsage ("1.5MiB / 512MiB"; the host's
// memory without a limit, as Docker) .MemPerc .PIDs .NetIO ("1.2kB / 648B") .BlockIO, and
// kern's .Source (cgroup or proc).
const std::vector<TemplateField>& stats_fields();
nlohmann::ordered_json stats_row(const BoxUsage& u);

// 1.5MiB, 512MiB, 7.63GiB: Docker's binary sizes of memory (four significant digits).
std::string binary_size(uint64_t bytes);

}  // namespace kern::cli
