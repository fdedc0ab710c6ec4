// `kern oci update`'s input: a LinuxResources document (-r/--resources FILE, "-" for stdin) or
// runc's per-field flags, which engines pass (with -r, the flags are ignored, as runc does).
#pragma once

#include "cli/cli11.h"

#include <string>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct OciUpdateFlags {
  std::string resources;  // "" when absent
  // As given ("" when absent): sizes take k/m/g suffixes, -1 lifts the limit.
  std::string memory, memory_swap, memory_reservation;
  std::string cpu_quota, cpu_period, cpu_shares, cpuset_cpus, cpuset_mems, pids_limit, blkio_weight;
};

void add_oci_update_flags(CLI::App* c, OciUpdateFlags& f);

// The resources the flags ask for (reads the document for -r).
Result<bundle::Resources> oci_update_resources(const OciUpdateFlags& f);

}  // namespace kern::cli
