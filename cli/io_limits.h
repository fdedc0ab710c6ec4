// Docker's block I/O flags, --device-read-bps, --device-write-bps, --device-read-iops and
// --device-write-iops, each DEVICE:RATE, turned into io.max entries (runtime/cgroup/io_throttle.h).
// The device is checked here, before anything is created: a block device that is a whole disk
// (io.max throttles disks; the kernel refuses a partition's numbers).
#pragma once

#include "cli/cli11.h"

#include <string>
#include <string_view>
#include <vector>

#include "cli/flag_filter.h"
#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

enum class IoCap { read_bps, write_bps, read_iops, write_iops };

// Adds one flag's value to `list`, merging entries of the same device. `sysfs` is where
// /sys/dev/block is looked up (tests pass a fake one).
Status add_io_limit(std::vector<IoThrottle>& list, IoCap cap, const std::string& arg,
                    const std::string& sysfs = "/sys");

// The io.max entry of the disk MAJ:MIN in `list`, added (named `name`) when there is none yet:
// flags and kern.toml's vdisk iops/bandwidth fill the same entry of a disk.
IoThrottle& io_entry(std::vector<IoThrottle>& list, uint32_t major, uint32_t minor, const std::string& name);
// `sysfs`/dev/block/MAJ:MIN when that block device is a partition (io.max takes whole disks
// only), else "": its "dev" beside it ("NODE/../dev") is the disk's own MAJ:MIN.
std::string partition_node(const std::string& sysfs, uint32_t major, uint32_t minor);

// The flag's name, "--device-write-bps".
std::string io_cap_flag(IoCap cap);

// The four flags' values as given, for `kern box`, `kern kernel start` and `kern run`.
struct IoFlags {
  std::vector<std::string> read_bps, write_bps, read_iops, write_iops;
};
void add_io_flags(CLI::App* c, IoFlags& io, const FlagFilter& f = FlagFilter());
// All of them into `list` (add_io_limit for each value); the first bad one is the error.
Status build_io_limits(const IoFlags& f, std::vector<IoThrottle>& list);

}  // namespace kern::cli
