// The `kern ps` table; see ps_table.h.
#include "cli/ps_table.h"

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

// "running", "exited (1)", "restarting (1)" (between the boxes of --restart: the last one's
// code), with the count of restarts after a running one that had some ("running (restarts 2)").
std::string status_text(const BoxRecord& b) {
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
  auto row = [with_status](const std::string& name, const std::string& kind, const std::string& pid,
                           const std::string& up, const std::string& status, const std::string& image,
                           const std::string& command) {
    std::string line = pad(name, 24) + " " + pad(kind, 7) + " " + pad(pid, 8) + " " + pad(up, 6) + " " +
                       (with_status ? pad(status, 11) + " " : "") + pad(image, kPsImageWidth) + " " + command;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = row("NAME", "KIND", "PID", "AGE", "STATUS", "IMAGE", "COMMAND");
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
    out += row(log::sanitize(b.name), log::sanitize(b.kind), exited ? "-" : std::to_string(b.init_pid),
               age(now_unix - b.started_unix), status_text(b),
               image, command);
  }
  return out;
}

}  // namespace kern::cli
