// The lifecycle verbs' shared parts; see box_lookup.h.
#include "cli/box_lookup.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <thread>
#include <nlohmann/json.hpp>

#include "runtime/detached/wire.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {

Result<BoxRecord> find_box(const std::string& runtime_dir, const std::string& name) {
  if (!valid_box_name(name)) return fail(ErrorKind::usage, 0, "invalid box name \"" + log::sanitize(name) + "\"");
  if (auto b = find_box_record(runtime_dir, name, true)) return std::move(*b);
  return fail(Error(ErrorKind::config, 0, "no box named \"" + name + "\"").with_hint("kern ps -a lists the boxes"));
}

Result<UniqueFd> ask_box(const std::string& runtime_dir, const std::string& name, const std::string& request) {
  KERN_TRY_ASSIGN(UniqueFd fd, connect_box(runtime_dir, name));
  KERN_TRY(sys::send_all(fd.get(), request + "\n", "the box's socket"));
  return fd;
}

Status signal_box(const std::string& runtime_dir, const BoxRecord& rec, int sig, bool stop) {
  if (record_exited(rec)) return fail(ErrorKind::config, 0, "the box \"" + rec.name + "\" is not running");
  if (!rec.detached) {
    if (!launcher_alive(rec) || ::kill(rec.launcher_pid, sig) != 0)
      return fail(ErrorKind::config, ESRCH, "signal the box \"" + rec.name + "\"");
    return {};
  }
  KERN_TRY_ASSIGN(UniqueFd fd, ask_box(runtime_dir, rec.name, (stop ? "stop " : "kill ") + std::to_string(sig)));
  std::string buf;
  KERN_TRY_ASSIGN(std::optional<WireFrame> f, read_frame(fd.get(), buf));
  if (!f) return fail(ErrorKind::config, 0, "the box \"" + rec.name + "\" ended before the signal was sent");
  if (f->type == WireType::error) return fail(ErrorKind::config, 0, "box \"" + rec.name + "\": " + f->payload);
  return {};
}

bool wait_not_running(const std::string& runtime_dir, const std::string& name, unsigned ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    auto rec = find_box(runtime_dir, name);
    if (!rec || record_exited(*rec)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

namespace {

nlohmann::json labels_object(const BoxRecord& r) {
  nlohmann::json o = nlohmann::json::object();
  for (const auto& [k, v] : r.labels) o[k] = v;
  return o;
}

}  // namespace

std::string inspect_json(const BoxRecord& r, const std::string& log_path) {
  using nlohmann::json;
  bool exited = record_exited(r);
  json j = {
      {"name", r.name},
      {"kind", r.kind},
      {"detached", r.detached},
      {"state", exited ? "exited" : r.state == "restarting" ? "restarting" : "running"},
      {"image", r.image.empty() ? json(nullptr) : json(r.image)},
      {"command", r.command},
      {"pids", {{"supervisor", exited ? json(nullptr) : json(r.launcher_pid)},
                {"init", exited ? json(nullptr) : json(r.init_pid)}}},
      {"cgroup", r.cgroup.empty() ? json(nullptr) : json(r.cgroup)},
      {"started_unix", r.started_unix},
      {"exited_unix", exited ? json(r.exited_unix) : json(nullptr)},
      {"exit_code", exited ? json(r.exit_code) : json(nullptr)},
      {"auto_remove", r.auto_remove},
      {"labels", labels_object(r)},
      {"ports", r.ports},
      {"volumes", r.volumes},
      {"stop_signal", signal_name(r.stop_signal)},
      {"stop_timeout", r.stop_timeout},
      {"restart_policy", r.restart_policy.empty() ? "no" : r.restart_policy},
      {"restart_count", r.restarts},
      {"last_exit_code", r.state == "restarting" || r.restarts > 0 ? json(r.exit_code) : json(nullptr)},
      {"log", r.detached ? json(log_path) : json(nullptr)},
  };
  auto h = json::parse(r.health.empty() ? "null" : r.health, nullptr, false);
  j["health"] = h.is_discarded() ? json(nullptr) : h;
  auto d = json::parse(r.detail.empty() ? "{}" : r.detail, nullptr, false);
  if (!d.is_discarded() && d.is_object()) {
    j["spec"] = d;
    if (d.contains("enforcement")) {
      j["enforcement"] = d["enforcement"];
      j["spec"].erase("enforcement");
    }
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

int parse_signal(const std::string& text) {
  if (text.empty()) return 0;
  if (std::isdigit(static_cast<unsigned char>(text[0]))) {
    char* end = nullptr;
    long n = std::strtol(text.c_str(), &end, 10);
    return (*end == '\0' && n > 0 && n < NSIG) ? static_cast<int>(n) : 0;
  }
  std::string up;
  for (char c : text) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up.rfind("SIG", 0) == 0) up.erase(0, 3);
  // RTMIN, RTMIN+N, RTMAX-N, RTMAX: the real-time signals, as kill(1) and systemd name them.
  if (up.rfind("RTMIN", 0) == 0 || up.rfind("RTMAX", 0) == 0) {
    const bool from_min = up[4] == 'N';
    std::string rest = up.substr(5);
    long n = 0;
    if (!rest.empty()) {
      if (rest.size() < 2 || rest[0] != (from_min ? '+' : '-') || !std::isdigit(static_cast<unsigned char>(rest[1])))
        return 0;
      char* end = nullptr;
      n = std::strtol(rest.c_str() + 1, &end, 10);
      if (*end != '\0' || n > SIGRTMAX - SIGRTMIN) return 0;
    }
    return from_min ? SIGRTMIN + static_cast<int>(n) : SIGRTMAX - static_cast<int>(n);
  }
  for (int s = 1; s < NSIG; ++s) {
    const char* abbrev = ::sigabbrev_np(s);
    if (abbrev && up == abbrev) return s;
  }
  return 0;
}

std::string signal_name(int sig) {
  if (sig >= SIGRTMIN && sig <= SIGRTMAX)
    return sig == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace kern::cli
