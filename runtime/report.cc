// Report-fd records; see report.h.
#include "runtime/report.h"

#include <nlohmann/json.hpp>

#include "runtime/net/private_net_plan.h"
#include "runtime/seccomp_filter.h"
#include "runtime/sys/fdio.h"

namespace kern {
namespace {

nlohmann::json verdict(Verdict v) { return verdict_name(v); }

}  // namespace

std::string started_record(const BoxSpec& spec, const StartedInfo& info) {
  const Enforcement& e = info.enforcement;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [name, ms] : info.phases_ms) phases[name] = ms;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& [step, err] : info.skipped) skipped.push_back({{"step", step}, {"errno", errno_name(err)}});
  nlohmann::json j = {
      {"event", "started"},
      {"name", spec.name},
      {"pid", info.init_pid},
      {"cgroup", e.cgroup_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.cgroup_path)},
      {"enforcement",
       {{"memory", verdict(e.memory)},
        {"pids", verdict(e.pids)},
        {"cpu", verdict(e.cpu)},
        {"cpuset", verdict(e.cpuset)},
        {"io", verdict(e.io)},
        {"devices", verdict(e.devices)}}},
      {"memory_max", e.memory_max ? nlohmann::json(*e.memory_max) : nlohmann::json(nullptr)},
      {"pids_max", e.pids_max ? nlohmann::json(*e.pids_max) : nlohmann::json(nullptr)},
      {"seccomp", seccomp_mode_name(spec.seccomp)},
      {"id_map", info.id_map},
      {"network", net::net_mode_name(spec.net)},
      {"egress_allow", spec.egress_allow.empty() ? nlohmann::json(nullptr) : nlohmann::json(spec.egress_allow)},
      {"phases_ms", phases},
      {"skipped", skipped},
  };
  // --egress-allow's names and the cgroup path are the user's and the host's bytes: replaced
  // where they are not UTF-8, never thrown on.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string exited_record(const BoxSpec& spec, const ExitedInfo& info) {
  const MemoryEvents& ev = info.events;
  auto opt = [&](uint64_t v) { return ev.valid ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j = {
      {"event", "exited"},
      {"name", spec.name},
      {"exit_code", info.exit_code},
      {"signal", info.signal == 0 ? nlohmann::json(nullptr) : nlohmann::json(info.signal)},
      {"oom_kill", opt(ev.oom_kill)},
      {"timed_out", info.timed_out},
      {"pids_limit_hits", opt(ev.pids_max_hits)},
      {"memory_peak", ev.valid && ev.memory_peak ? nlohmann::json(ev.memory_peak) : nlohmann::json(nullptr)},
      {"cpu_usec", ev.valid ? nlohmann::json(ev.cpu_usage_usec) : nlohmann::json(nullptr)},
      {"wall_ms", info.wall_ms},
  };
  return j.dump();
}

std::string egress_record(const std::string& box_name, const EgressEvent& ev) {
  nlohmann::json j = {
      {"event", "egress"},
      {"name", box_name},
      {"decision", ev.allowed ? "allowed" : "refused"},
      {"method", ev.method},
      {"host", ev.host},
      {"port", ev.port},
      {"address", ev.address.empty() ? nlohmann::json(nullptr) : nlohmann::json(ev.address)},
      {"reason", ev.reason},
      {"bytes_out", ev.bytes_out},
      {"bytes_in", ev.bytes_in},
  };
  // The host and method come from the box: bytes that are not UTF-8 are replaced, never thrown on.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void write_report_line(int fd, const std::string& json_line) {
  if (fd < 0) return;
  std::string line = json_line + "\n";
  (void)sys::write_all_raw(fd, line.data(), line.size());
}

}  // namespace kern
