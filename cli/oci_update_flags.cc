// kern oci update's flags -> Resources (see oci_update_flags.h).
#include "cli/oci_update_flags.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>

#include "profiles/units.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {

namespace {

Result<int64_t> integer(const std::string& flag, const std::string& v) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size())
    return fail(ErrorKind::usage, 0, "--" + flag + ": \"" + v + "\" is not an integer");
  return n;
}

// A size with an optional k/m/g suffix, or -1 for no limit.
Result<std::optional<int64_t>> size(const std::string& flag, const std::string& v) {
  if (v.empty()) return std::optional<int64_t>();
  if (v == "-1") return std::optional<int64_t>(-1);
  auto n = profiles::parse_size(v);
  if (!n) return fail(Error(ErrorKind::usage, 0, "--" + flag + ": " + n.error().what()));
  if (*n > static_cast<uint64_t>(INT64_MAX)) return fail(ErrorKind::usage, 0, "--" + flag + ": too large");
  return std::optional<int64_t>(static_cast<int64_t>(*n));
}

}  // namespace

void add_oci_update_flags(CLI::App* c, OciUpdateFlags& f) {
  c->add_option("-r,--resources", f.resources, "a LinuxResources JSON document (\"-\": stdin); the other flags are then ignored");
  c->add_option("-m,--memory", f.memory, "memory limit (k, m, g suffixes; -1: none)");
  c->add_option("--memory-swap", f.memory_swap, "memory plus swap limit (-1: no swap limit)");
  c->add_option("--memory-reservation", f.memory_reservation, "memory soft limit (memory.low)");
  c->add_option("--cpu-quota", f.cpu_quota, "CPU time per period, in microseconds (-1: none)");
  c->add_option("--cpu-period", f.cpu_period, "the CPU period, in microseconds");
  c->add_option("--cpu-share,--cpu-shares", f.cpu_shares, "CPU shares (a relative weight)");
  c->add_option("--cpuset-cpus", f.cpuset_cpus, "the CPUs allowed (0-3,5)");
  c->add_option("--cpuset-mems", f.cpuset_mems, "the memory nodes allowed");
  c->add_option("--pids-limit", f.pids_limit, "the most processes at once (-1: none)");
  c->add_option("--blkio-weight", f.blkio_weight, "block IO weight, 10 to 1000");
}

Result<bundle::Resources> oci_update_resources(const OciUpdateFlags& f) {
  if (!f.resources.empty()) {
    Result<std::string> text = f.resources == "-" ? sys::read_all(STDIN_FILENO, 1 << 20, "stdin")
                                                  : sys::read_file(AT_FDCWD, f.resources);
    if (!text) return fail(std::move(text).error());
    return bundle::parse_resources_document(*text);
  }
  bundle::Resources r;
  KERN_TRY_ASSIGN(r.memory_limit, size("memory", f.memory));
  KERN_TRY_ASSIGN(r.memory_swap, size("memory-swap", f.memory_swap));
  KERN_TRY_ASSIGN(r.memory_reservation, size("memory-reservation", f.memory_reservation));
  if (!f.cpu_quota.empty()) {
    KERN_TRY_ASSIGN(r.cpu_quota, integer("cpu-quota", f.cpu_quota));
  }
  auto unsigned_flag = [](const std::string& flag, const std::string& v, std::optional<uint64_t>& out) -> Status {
    if (v.empty()) return {};
    KERN_TRY_ASSIGN(int64_t n, integer(flag, v));
    if (n < 0) return fail(ErrorKind::usage, 0, "--" + flag + ": must not be negative");
    out = static_cast<uint64_t>(n);
    return {};
  };
  KERN_TRY(unsigned_flag("cpu-period", f.cpu_period, r.cpu_period));
  KERN_TRY(unsigned_flag("cpu-share", f.cpu_shares, r.cpu_shares));
  r.cpu_cpus = f.cpuset_cpus;
  r.cpu_mems = f.cpuset_mems;
  if (!f.pids_limit.empty()) {
    KERN_TRY_ASSIGN(r.pids_limit, integer("pids-limit", f.pids_limit));
  }
  if (!f.blkio_weight.empty()) {
    std::optional<uint64_t> w;
    KERN_TRY(unsigned_flag("blkio-weight", f.blkio_weight, w));
    if (*w > 1000) return fail(ErrorKind::usage, 0, "--blkio-weight: must be at most 1000");
    r.io_weight = static_cast<uint32_t>(*w);
  }
  return r;
}

}  // namespace kern::cli
