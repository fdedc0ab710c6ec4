// Units of kern's resource values: sizes ("512m", "2g", "1.5g", "4096", "64kb"), CPU amounts
// ("1.5", "0.2") and CPU lists ("0-3,5"). Pure; shared by kern.toml and the command-line flags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::profiles {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kTiB = 1024 * kGiB;

// Bounds checked by the parse_* functions below.
inline constexpr uint64_t kMinMemory = 1 * kMiB;  // below this a box cannot even exec
inline constexpr uint64_t kMaxSize = 1024 * kTiB;
inline constexpr uint64_t kMinDiskSize = 64 * kKiB;
inline constexpr double kMinCpus = 0.01;  // cpu.max quota >= 1000 us per 100000 us period
inline constexpr double kMaxCpus = 8192;
inline constexpr unsigned kMaxCpuIndex = 8191;
inline constexpr uint64_t kMinPids = 2;
inline constexpr uint64_t kMaxPids = 4194304;  // PID_MAX_LIMIT

// Bytes, or a number (fraction allowed) with k/m/g/t (binary: 1k = 1024), optionally followed
// by "b" or "ib" in any case, with or without spaces before the unit: "512m", "256 MB" and
// "1 GiB" alike. No sign, nothing after the unit. Overflow is an error.
Result<uint64_t> parse_size(std::string_view text);
// parse_size plus the memory bounds [kMinMemory, kMaxSize]; the message suggests "m" when a
// bare small number was probably meant in MiB.
Result<uint64_t> parse_memory(std::string_view text);
Status check_memory(uint64_t bytes);
Status check_disk_size(uint64_t bytes);
// A decimal CPU amount in [kMinCpus, kMaxCpus].
Result<double> parse_cpus(std::string_view text);
Status check_cpus(double cpus);
// pids.max in [kMinPids, kMaxPids].
Result<uint64_t> parse_pids(std::string_view text);
// io.max rates: bytes per second (a size above 0) and operations per second (a whole number
// above 0).
Result<uint64_t> parse_bps(std::string_view text);
Result<uint64_t> parse_iops(std::string_view text);
// --timeout: "30" (seconds), "2s", "500ms", "1.5m", "1h" -> milliseconds; "0" is none. At most
// kMaxTimeoutMs; a fraction of a millisecond is refused.
inline constexpr uint64_t kMaxTimeoutMs = 30ull * 24 * 3600 * 1000;  // 30 days
Result<uint64_t> parse_duration_ms(std::string_view text);
// A duration for messages: whole seconds as "2s", anything else as "1500ms".
std::string format_duration_ms(uint64_t ms);
// "0-3,5,7-8" -> the sorted CPU numbers; ranges ascending, no duplicates, each <= kMaxCpuIndex.
Result<std::vector<unsigned>> parse_cpu_list(std::string_view text);
// The canonical form of a CPU list: "0-3,5".
std::string format_cpu_list(const std::vector<unsigned>& cpus);

// "512 MiB", "1.5 GiB", "4096 B": for messages.
std::string format_size(uint64_t bytes);
// "1.5", "0.2": the shortest exact-enough decimal for messages.
std::string format_cpus(double cpus);

}  // namespace kern::profiles
