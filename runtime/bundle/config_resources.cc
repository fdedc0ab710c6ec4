// linux.resources of config.json -> Resources (cgroup limits as the document states them; the
// cgroup v2 translation happens when the box's cgroup is made). Pure.
#include "runtime/bundle/config_parts.h"

namespace kern::bundle {

namespace {

Status parse_throttle(const JsonNode& bio, const char* key, std::vector<ThrottleDevice>& out) {
  if (!bio.has(key)) return {};
  JsonNode arr = bio.at(key);
  KERN_TRY(each_object(arr, {"major", "minor"}, [&](const JsonNode& d) -> Status {
    ThrottleDevice t;
    KERN_TRY_ASSIGN(t.major, d.at("major").i64());
    KERN_TRY_ASSIGN(t.minor, d.at("minor").i64());
    std::optional<uint64_t> rate;
    KERN_TRY(get(d, "rate", rate));
    t.rate = rate.value_or(0);
    out.push_back(t);
    return {};
  }));
  return {};
}

Status parse_weight(const JsonNode& n, const char* key, std::optional<uint32_t>& out) {
  KERN_TRY(get(n, key, out));
  if (out && *out > 65535) return fail(n.at(key).error("out of range for a 16-bit weight"));
  return {};
}

Status parse_block_io(const JsonNode& b, Resources& out) {
  KERN_TRY(b.object());
  KERN_TRY(parse_weight(b, "weight", out.io_weight));
  KERN_TRY(parse_weight(b, "leafWeight", out.io_leaf_weight));
  if (b.has("weightDevice")) {
    JsonNode arr = b.at("weightDevice");
    KERN_TRY(each_object(arr, {"major", "minor"}, [&](const JsonNode& d) -> Status {
      WeightDevice w;
      KERN_TRY_ASSIGN(w.major, d.at("major").i64());
      KERN_TRY_ASSIGN(w.minor, d.at("minor").i64());
      KERN_TRY(parse_weight(d, "weight", w.weight));
      KERN_TRY(parse_weight(d, "leafWeight", w.leaf_weight));
      out.io_weight_device.push_back(w);
      return {};
    }));
  }
  KERN_TRY(parse_throttle(b, "throttleReadBpsDevice", out.io_read_bps));
  KERN_TRY(parse_throttle(b, "throttleWriteBpsDevice", out.io_write_bps));
  KERN_TRY(parse_throttle(b, "throttleReadIOPSDevice", out.io_read_iops));
  KERN_TRY(parse_throttle(b, "throttleWriteIOPSDevice", out.io_write_iops));
  return {};
}

Status parse_device_rules(const JsonNode& arr, std::vector<DeviceRule>& out) {
  KERN_TRY(each_object(arr, {"allow"}, [&](const JsonNode& d) -> Status {
    DeviceRule r;
    KERN_TRY_ASSIGN(r.allow, d.at("allow").boolean());
    KERN_TRY(get(d, "type", r.type));
    if (!(r.type.empty() || r.type == "a" || r.type == "c" || r.type == "b"))
      return fail(d.at("type").error("expected one of a, c, b, got \"" + r.type + "\""));
    KERN_TRY(get(d, "major", r.major));
    KERN_TRY(get(d, "minor", r.minor));
    KERN_TRY(get(d, "access", r.access));
    // runc reads the letters it knows and passes over the rest ("rwa" is "rw"); so does kern,
    // and the plan says which it left out.
    std::string known;
    for (char ch : r.access) (ch == 'r' || ch == 'w' || ch == 'm' ? known : r.access_ignored).push_back(ch);
    r.access = known;
    out.push_back(std::move(r));
    return {};
  }));
  return {};
}

}  // namespace

Status parse_resources(const JsonNode& r, Resources& out) {
  KERN_TRY(r.object());
  if (r.has("memory")) {
    JsonNode m = r.at("memory");
    KERN_TRY(m.object());
    KERN_TRY(get(m, "limit", out.memory_limit));
    KERN_TRY(get(m, "reservation", out.memory_reservation));
    KERN_TRY(get(m, "swap", out.memory_swap));
    KERN_TRY(get(m, "kernel", out.memory_kernel));
    KERN_TRY(get(m, "kernelTCP", out.memory_kernel_tcp));
    KERN_TRY(get(m, "swappiness", out.memory_swappiness));
    if (out.memory_swappiness && *out.memory_swappiness > 100)
      return fail(m.at("swappiness").error("must be at most 100"));
    KERN_TRY(get(m, "disableOOMKiller", out.disable_oom_killer));
  }
  if (r.has("cpu")) {
    JsonNode c = r.at("cpu");
    KERN_TRY(c.object());
    KERN_TRY(get(c, "shares", out.cpu_shares));
    KERN_TRY(get(c, "quota", out.cpu_quota));
    KERN_TRY(get(c, "burst", out.cpu_burst));
    KERN_TRY(get(c, "period", out.cpu_period));
    KERN_TRY(get(c, "realtimeRuntime", out.cpu_realtime_runtime));
    KERN_TRY(get(c, "realtimePeriod", out.cpu_realtime_period));
    KERN_TRY(get(c, "idle", out.cpu_idle));
    KERN_TRY(get(c, "cpus", out.cpu_cpus));
    KERN_TRY(get(c, "mems", out.cpu_mems));
  }
  if (r.has("pids")) {
    JsonNode p = r.at("pids");
    KERN_TRY(p.object());
    KERN_TRY(require(p, "limit"));
    KERN_TRY(get(p, "limit", out.pids_limit));
  }
  if (r.has("blockIO")) KERN_TRY(parse_block_io(r.at("blockIO"), out));
  if (r.has("hugepageLimits")) {
    JsonNode arr = r.at("hugepageLimits");
    KERN_TRY(each_object(arr, {"pageSize", "limit"}, [&](const JsonNode& h) -> Status {
      KERN_TRY_ASSIGN(std::string size, h.at("pageSize").str());
      KERN_TRY_ASSIGN(uint64_t limit, h.at("limit").u64());
      out.hugepage_limits.emplace_back(std::move(size), limit);
      return {};
    }));
  }
  if (r.has("devices")) KERN_TRY(parse_device_rules(r.at("devices"), out.devices));
  KERN_TRY(get(r, "unified", out.unified));
  out.has_network = r.has("network");
  out.has_rdma = r.has("rdma");
  return {};
}

Result<Resources> parse_resources_document(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return fail(ErrorKind::config, 0, "resources: not a JSON document");
  Resources r;
  KERN_TRY(parse_resources(JsonNode(doc, "resources"), r));
  return r;
}

}  // namespace kern::bundle
