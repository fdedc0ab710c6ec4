// Started and exited announcements; see box_announce.h. Launcher side.
#include "runtime/box_announce.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/userns.h"

namespace kern {
namespace {

void print_timing(const std::vector<std::pair<std::string, double>>& phases) {
  std::string line = "timing:";
  for (const auto& [name, ms] : phases) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s=%.3fms", name.c_str(), ms);
    line += buf;
  }
  log::note(line);
}

}  // namespace

BoxRecord started_box_record(const BoxSpec& spec, const BoxHandle& box) {
  BoxRecord rec;
  rec.name = spec.name;
  rec.launcher_pid = ::getpid();
  rec.launcher_start = sys::own_start_time();
  rec.init_pid = box.pid();
  rec.cgroup = box.cgroup() ? box.cgroup()->path() : "";
  rec.image = spec.image_ref;
  rec.image_digest = spec.image_digest;
  rec.uid_range = spec.uid_range;
  for (const auto& a : spec.argv) rec.command += (rec.command.empty() ? "" : " ") + a;
  rec.started_unix = ::time(nullptr);
  rec.labels = spec.labels;
  for (const auto& b : spec.binds)
    if (!b.volume.empty()) rec.volumes.push_back(b.volume);
  if (spec.net == NetMode::private_net)
    for (const auto& p : spec.private_net.publish) rec.ports.push_back(published_port_text(p));
  rec.stop_signal = spec.stop_signal;
  rec.stop_timeout = spec.stop_timeout_s;
  return rec;
}

std::string published_port_text(const PortPublish& p) {
  std::string ip = p.host_ip.empty() ? "0.0.0.0" : p.host_ip.find(':') != std::string::npos ? "[" + p.host_ip + "]" : p.host_ip;
  return ip + ":" + std::to_string(p.host_port) + "->" + std::to_string(p.box_port) + (p.udp ? "/udp" : "/tcp");
}

Enforcement announce_started(const BoxSpec& spec, const BoxHandle& box, TimingPage* timing) {
  // Without a per-box cgroup whatever was asked for is reported as not in force.
  const BoxCgroup* cg = box.cgroup();
  Enforcement enf = cg ? cg->read_back(spec.limits) : uncapped_enforcement(spec.limits);
  if (spec.started_fd >= 0) {
    unsigned char bytes[2] = {0x01, started_memory_byte(enf)};
    (void)sys::write_all_raw(spec.started_fd, bytes, 2);
  }
  for (const auto& sk : box.skipped())
    log::warning("the box runs without " + sk.step + " (" + errno_name(sk.err) + ")");
  if (spec.report_fd >= 0 || spec.timing) {
    StartedInfo si{box.pid(), enf, describe_id_map(::getuid(), spec.uid_range),
                   timing ? phase_durations(*timing) : std::vector<std::pair<std::string, double>>{}};
    for (const auto& sk : box.skipped()) si.skipped.push_back({sk.step, sk.err});
    if (spec.report_fd >= 0) write_report_line(spec.report_fd, started_record(spec, si));
    if (spec.timing) print_timing(si.phases_ms);
  }
  return enf;
}

ExitedInfo exited_info(const BoxSpec& spec, const BoxHandle& box, const BoxExit& bx, bool timed_out,
                       uint64_t start_ns) {
  ExitedInfo ei;
  ei.exit_code = bx.exit_code;
  ei.signal = bx.signal;
  ei.timed_out = timed_out;
  // The kernel's counters are read only for the report fd, the one place that shows them.
  if (box.cgroup() && spec.report_fd >= 0) ei.events = box.cgroup()->events();
  ei.wall_ms = static_cast<double>(monotonic_ns() - start_ns) / 1e6;
  return ei;
}

void announce_exited(const BoxSpec& spec, const ExitedInfo& info) {
  if (spec.report_fd >= 0) write_report_line(spec.report_fd, exited_record(spec, info));
}

}  // namespace kern
