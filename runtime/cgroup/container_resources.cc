// Resources -> cgroup v2 writes, and the stats document (see container_resources.h). Pure.
#include "runtime/cgroup/container_resources.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <sstream>

namespace kern::bundle {

namespace {

Error refused(const std::string& what) { return Error(ErrorKind::config, 0, "resources." + what); }

std::string limit_or_max(int64_t v) { return v < 0 ? "max" : std::to_string(v); }

// memory.swap.max holds the swap alone; the specification's swap is memory plus swap.
Result<std::optional<std::string>> swap_max(const Resources& r) {
  if (!r.memory_swap) return std::optional<std::string>();
  int64_t swap = *r.memory_swap;
  if (swap < 0) return std::optional<std::string>("max");
  if (!r.memory_limit || *r.memory_limit < 0)
    return fail(refused("memory.swap: a swap limit needs a memory limit (memory.limit)"));
  if (swap < *r.memory_limit)
    return fail(refused("memory.swap: " + std::to_string(swap) + " is below memory.limit " +
                        std::to_string(*r.memory_limit) + " (swap counts memory plus swap)"));
  return std::optional<std::string>(std::to_string(swap - *r.memory_limit));
}

// cpu.max is "QUOTA PERIOD" (QUOTA may be "max"); the half a document leaves out is kept.
std::optional<std::string> cpu_max(const Resources& r, const std::string& current) {
  if (!r.cpu_quota && !r.cpu_period) return std::nullopt;
  std::string cur_quota = "max", cur_period = "100000";
  std::istringstream in(current);
  in >> cur_quota >> cur_period;
  std::string quota = r.cpu_quota ? (*r.cpu_quota <= 0 ? "max" : std::to_string(*r.cpu_quota)) : cur_quota;
  std::string period = r.cpu_period && *r.cpu_period > 0 ? std::to_string(*r.cpu_period) : cur_period;
  return quota + " " + period;
}

// cpu.shares (2..262144) -> cpu.weight (1..10000), the conversion engines and runtimes share.
uint64_t shares_to_weight(uint64_t shares) {
  if (shares < 2) shares = 2;
  if (shares > 262144) shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

// blkio weight (10..1000) -> io.weight (1..10000).
uint64_t blkio_to_io_weight(uint64_t w) {
  if (w < 10) w = 10;
  if (w > 1000) w = 1000;
  return 1 + ((w - 10) * 9999) / 990;
}

std::string dev(int64_t major, int64_t minor) { return std::to_string(major) + ":" + std::to_string(minor); }

}  // namespace

Result<std::vector<CgroupWrite>> resource_writes(const Resources& r, const std::string& current_cpu_max,
                                                 std::vector<std::string>* ignored) {
  std::vector<CgroupWrite> w;
  auto note = [&](const char* what) {
    if (ignored) ignored->push_back(what);
  };
  if (r.memory_limit) w.push_back({"memory.max", limit_or_max(*r.memory_limit)});
  if (r.memory_reservation) w.push_back({"memory.low", limit_or_max(*r.memory_reservation)});
  KERN_TRY_ASSIGN(std::optional<std::string> swap, swap_max(r));
  if (swap) w.push_back({"memory.swap.max", *swap});
  if (r.memory_kernel) note("memory.kernel");
  if (r.memory_kernel_tcp) note("memory.kernelTCP");
  if (r.memory_swappiness) note("memory.swappiness");
  if (r.disable_oom_killer) note("memory.disableOOMKiller");

  if (r.cpu_shares && *r.cpu_shares > 0) w.push_back({"cpu.weight", std::to_string(shares_to_weight(*r.cpu_shares))});
  if (auto m = cpu_max(r, current_cpu_max)) w.push_back({"cpu.max", *m});
  if (r.cpu_burst) w.push_back({"cpu.max.burst", std::to_string(*r.cpu_burst)});
  if (r.cpu_idle) w.push_back({"cpu.idle", std::to_string(*r.cpu_idle)});
  if (r.cpu_realtime_period || r.cpu_realtime_runtime)
    return fail(refused("cpu.realtimeRuntime/realtimePeriod: cgroup v2 has no realtime CPU time"));
  if (!r.cpu_cpus.empty()) w.push_back({"cpuset.cpus", r.cpu_cpus});
  if (!r.cpu_mems.empty()) w.push_back({"cpuset.mems", r.cpu_mems});

  // runc's reading: 0 leaves the limit as it is, a negative one lifts it.
  if (r.pids_limit && *r.pids_limit != 0) w.push_back({"pids.max", limit_or_max(*r.pids_limit)});

  if (r.io_weight) w.push_back({"io.weight", "default " + std::to_string(blkio_to_io_weight(*r.io_weight))});
  for (const auto& d : r.io_weight_device)
    if (d.weight) w.push_back({"io.weight", dev(d.major, d.minor) + " " + std::to_string(blkio_to_io_weight(*d.weight))});
  auto throttle = [&](const std::vector<ThrottleDevice>& list, const char* key) {
    for (const auto& d : list)
      w.push_back({"io.max", dev(d.major, d.minor) + " " + key + "=" + (d.rate == 0 ? "max" : std::to_string(d.rate))});
  };
  throttle(r.io_read_bps, "rbps");
  throttle(r.io_write_bps, "wbps");
  throttle(r.io_read_iops, "riops");
  throttle(r.io_write_iops, "wiops");

  for (const auto& [size, limit] : r.hugepage_limits) {
    if (size.empty() || size.find('/') != std::string::npos || size.find("..") != std::string::npos)
      return fail(refused("hugepageLimits: page size \"" + size + "\" is not a page size"));
    w.push_back({"hugetlb." + size + ".max", std::to_string(limit)});
  }
  if (!r.devices.empty())
    return fail(refused("devices: kern oci update does not change a container's device rules"));
  if (r.has_network) return fail(refused("network: cgroup v2 has no network controller"));
  if (r.has_rdma) return fail(refused("rdma: kern oci update does not set rdma limits"));

  for (const auto& [key, value] : r.unified) {
    bool plain = !key.empty() && key.find('/') == std::string::npos && key != "." && key != ".." &&
                 key.find('.') != std::string::npos;
    if (!plain) return fail(refused("unified: \"" + key + "\" is not a cgroup file name"));
    w.push_back({key, value});
  }
  return w;
}

namespace {

// "max" or a number; nullopt when neither.
std::optional<uint64_t> number(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t == "max") return UINT64_MAX;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

// "key value" lines (cpu.stat, memory.stat).
std::map<std::string, uint64_t> flat_keyed(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string k, v;
  while (in >> k >> v)
    if (auto n = number(v)) out[k] = *n;
  return out;
}

}  // namespace

const std::vector<std::string>& stats_files() {
  static const std::vector<std::string> files = {"cpu.stat",         "memory.current",  "memory.max",
                                                 "memory.peak",      "memory.stat",     "memory.swap.current",
                                                 "memory.swap.max",  "pids.current",    "pids.max"};
  return files;
}

const std::vector<std::pair<std::string, std::string>>& stats_files_v1() {
  static const std::vector<std::pair<std::string, std::string>> files = {
      {"cpuacct", "cpuacct.usage"},          {"cpuacct", "cpuacct.stat"},
      {"cpu", "cpu.stat"},                   {"memory", "memory.usage_in_bytes"},
      {"memory", "memory.limit_in_bytes"},   {"memory", "memory.max_usage_in_bytes"},
      {"memory", "memory.failcnt"},          {"memory", "memory.memsw.usage_in_bytes"},
      {"memory", "memory.memsw.limit_in_bytes"}, {"memory", "memory.stat"},
      {"pids", "pids.current"},              {"pids", "pids.max"}};
  return files;
}

std::string stats_document(const std::string& id, const std::map<std::string, std::string>& files) {
  auto file = [&](const char* name) -> const std::string* {
    auto it = files.find(name);
    return it == files.end() ? nullptr : &it->second;
  };
  auto num = [&](const char* name) -> std::optional<uint64_t> {
    const std::string* t = file(name);
    return t ? number(*t) : std::nullopt;
  };
  nlohmann::json data = nlohmann::json::object();
  if (auto total = num("cpuacct.usage")) {
    // cgroup v1: cpuacct counts nanoseconds, cpuacct.stat USER_HZ ticks (100 a second), and
    // cpu.stat is the v1 file (throttled_time in nanoseconds).
    auto ticks = flat_keyed(file("cpuacct.stat") ? *file("cpuacct.stat") : std::string());
    auto thr = flat_keyed(file("cpu.stat") ? *file("cpu.stat") : std::string());
    data["cpu"] = {{"usage", {{"total", *total}, {"kernel", ticks["system"] * 10000000}, {"user", ticks["user"] * 10000000}}},
                   {"throttling",
                    {{"periods", thr["nr_periods"]}, {"throttledPeriods", thr["nr_throttled"]},
                     {"throttledTime", thr["throttled_time"]}}}};
  } else if (const std::string* t = file("cpu.stat")) {
    auto s = flat_keyed(*t);
    // cgroup v2 counts microseconds; runc's document, nanoseconds.
    auto ns = [&](const char* k) { return s.count(k) ? s[k] * 1000 : 0; };
    data["cpu"] = {{"usage", {{"total", ns("usage_usec")}, {"kernel", ns("system_usec")}, {"user", ns("user_usec")}}},
                   {"throttling",
                    {{"periods", s["nr_periods"]}, {"throttledPeriods", s["nr_throttled"]},
                     {"throttledTime", ns("throttled_usec")}}}};
  }
  if (auto cur = num("memory.current")) {
    nlohmann::json usage = {{"usage", *cur}};
    if (auto m = num("memory.max")) usage["limit"] = *m;
    if (auto p = num("memory.peak")) usage["max"] = *p;
    nlohmann::json mem = {{"usage", usage}};
    if (auto sc = num("memory.swap.current")) {
      nlohmann::json swap = {{"usage", *sc}};
      if (auto sm = num("memory.swap.max")) swap["limit"] = *sm;
      mem["swap"] = swap;
    }
    if (const std::string* st = file("memory.stat")) mem["raw"] = flat_keyed(*st);
    data["memory"] = mem;
  }
  if (auto cur = num("memory.usage_in_bytes")) {
    // cgroup v1; its swap figures are memory plus swap (memsw), as runc reports them there.
    nlohmann::json usage = {{"usage", *cur}};
    if (auto m = num("memory.limit_in_bytes")) usage["limit"] = *m;
    if (auto p = num("memory.max_usage_in_bytes")) usage["max"] = *p;
    if (auto f = num("memory.failcnt")) usage["failcnt"] = *f;
    nlohmann::json mem = {{"usage", usage}};
    if (auto sc = num("memory.memsw.usage_in_bytes")) {
      nlohmann::json swap = {{"usage", *sc}};
      if (auto sm = num("memory.memsw.limit_in_bytes")) swap["limit"] = *sm;
      mem["swap"] = swap;
    }
    if (const std::string* st = file("memory.stat")) mem["raw"] = flat_keyed(*st);
    data["memory"] = mem;
  }
  if (auto cur = num("pids.current")) {
    nlohmann::json pids = {{"current", *cur}};
    // pids.max "max": runc's document says 0 for no limit.
    if (auto m = num("pids.max")) pids["limit"] = *m == UINT64_MAX ? 0 : *m;
    data["pids"] = pids;
  }
  // In runc's order (type, id, data): the keys of a plain json object are sorted.
  return "{\"type\":\"stats\",\"id\":" + nlohmann::json(id).dump() + ",\"data\":" + data.dump() + "}";
}

}  // namespace kern::bundle
