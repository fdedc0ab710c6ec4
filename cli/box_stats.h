// What a running box uses, for `kern stats` and `kern top`: read from its cgroup where it has one
// (cpu.stat, memory.current and memory.max, pids.current and pids.max, io.stat), else from /proc
// for its processes (box init and every descendant: utime+stime, resident memory, the count,
// read_bytes/write_bytes), with the source said; the network from the box's own
// /proc/INIT/net/dev (its namespace's interfaces but lo). Runs in the verb's process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

std::string usage_json(const std::vector<BoxUsage>& u);
std::string usage_table(const std::vector<BoxUsage>& u);

}  // namespace kern::cli
