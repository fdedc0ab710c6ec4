// The `kern ps` table; see ps_table.h.
#include "cli/ps_table.h"

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {

// "running", "exited (1)", "restarting (1)" (between the boxes of --restart: the last one's
// code), with the count of restarts after a running one that had some ("running (restarts 2)").
std::string ps_status(const BoxRecord& b) {
  if (record_exited(b)) return "exited (" + std::to_string(b.exit_code) + ")";
  if (b.state == "restarting") return "restarting (" + std::to_string(b.exit_code) + ")";
  std::string notes;
  if (!b.health.empty()) {
    auto h = nlohmann::json::parse(b.health, nullptr, false);
    if (h.is_object() && h.contains("status") && h["status"].is_string()) notes = h["status"].get<std::string>();
  }
  if (b.restarts > 0) notes += (notes.empty() ? "" : ", ") + std::string("restarts ") + std::to_string(b.restarts);
  if (!b.cgroup.empty()) {
    // kern pause: the box's cgroup is frozen.
    auto f = sys::read_file(AT_FDCWD, b.cgroup + "/cgroup.freeze", 16);
    if (f && f->compare(0, 1, "1") == 0) return "paused" + (notes.empty() ? "" : " (" + notes + ")");
  }
  return notes.empty() ? "running" : "running (" + notes + ")";
}

namespace {

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::string pad(std::string s, size_t width) {
  size_t n = code_points(s);
  if (n < width) s.append(width - n, ' ');
  return s;
}

std::string age(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 7200) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds / 3600) + "h";
}

}  // namespace

std::string fit_cell(std::string_view text, size_t width) {
  if (width == 0) return "";
  if (code_points(text) <= width) return std::string(text);
  // Keep width-1 characters, then the ellipsis.
  size_t kept = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      if (kept == width - 1) break;
      ++kept;
    }
  }
  return std::string(text.substr(0, i)) + "\u2026";
}

std::string ps_table(const std::vector<BoxRecord>& boxes, int64_t now_unix, bool no_trunc, bool with_status) {
  // PORTS only when a listed box publishes some (--net private -p), as STATUS only with -a: the
  // columns scripts split on stay where they were.
  bool with_ports = false;
  for (const auto& b : boxes) with_ports |= !b.ports.empty();
  auto row = [with_status, with_ports](const std::string& name, const std::string& kind, const std::string& pid,
                                       const std::string& up, const std::string& status, const std::string& ports,
                                       const std::string& image, const std::string& command) {
    std::string line = pad(name, 24) + " " + pad(kind, 7) + " " + pad(pid, 8) + " " + pad(up, 6) + " " +
                       (with_status ? pad(status, 11) + " " : "") + (with_ports ? pad(ports, 22) + " " : "") +
                       pad(image, kPsImageWidth) + " " + command;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = row("NAME", "KIND", "PID", "AGE", "STATUS", "PORTS", "IMAGE", "COMMAND");
  for (const auto& b : boxes) {
    // Names follow the contract's rule (no spaces, no controls) and are never cut: they are
    // what `kern stop` takes. Everything else came from a file and is escaped.
    std::string image = b.image.empty() ? "-" : log::sanitize(b.image);
    std::string command = log::sanitize(b.command);
    if (!no_trunc) {
      image = fit_cell(image, kPsImageWidth);
      command = fit_cell(command, kPsCommandWidth);
    }
    bool exited = record_exited(b);
    std::string ports;
    for (const auto& p : b.ports) ports += (ports.empty() ? "" : ",") + log::sanitize(p);
    out += row(log::sanitize(b.name), log::sanitize(b.kind), exited ? "-" : std::to_string(b.init_pid),
               age(now_unix - b.started_unix), ps_status(b), ports.empty() ? "-" : ports, image, command);
  }
  return out;
}

}  // namespace kern::cli
