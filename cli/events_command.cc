// `kern events [--format json|TEMPLATE] [--since-start]`: the events of detached boxes as they
// happen (runtime/detached/events.h), until interrupted, as `docker events` streams them; with
// --since-start, those already in the log first. A template (cli/go_template.h) sees docker
// events' fields (cli/docker_views.h); json is the log's own line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/docker_views.h"
#include "cli/go_template.h"
#include "cli/verb.h"
#include "runtime/detached/events.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/unique_fd.h"

namespace kern::cli {
namespace {
namespace events_verb {

std::string g_format = "table";
bool g_since_start = false;

// "2026-12-03T12:00:00.123456789Z box NAME TYPE (key=value ...)".
std::string text_line(const std::string& json_line) {
  auto j = nlohmann::json::parse(json_line, nullptr, false);
  if (!j.is_object()) return "";
  uint64_t ns = j.value("time_ns", uint64_t{0});
  time_t secs = static_cast<time_t>(ns / 1000000000);
  struct tm tm;
  ::gmtime_r(&secs, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%09lluZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<unsigned long long>(ns % 1000000000));
  std::string out = std::string(stamp) + " box " + j.value("name", "") + " " + j.value("type", "");
  std::string extra;
  for (const auto& [k, v] : j.items())
    if (k != "time_ns" && k != "name" && k != "type") extra += (extra.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return log::sanitize(out + (extra.empty() ? "" : " (" + extra + ")")) + "\n";
}

Result<int> run_events() {
  std::optional<GoTemplate> tmpl;
  if (g_format != "json") {
    KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(g_format, "kern events", event_fields()));
    if (!t.default_table()) tmpl = std::move(t);
    // A stream has no end to align columns at: "table ..." prints its header, then each line.
    if (tmpl && tmpl->kind == GoTemplate::Kind::table) {
      KERN_TRY_ASSIGN(std::string head, render_rows(*tmpl, {}, "kern events", event_fields()));
      KERN_TRY(sys::write_all(STDOUT_FILENO, head, "stdout"));
      tmpl->kind = GoTemplate::Kind::lines;
    }
  }
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  const std::string path = event_log_path(rt);
  UniqueFd fd;
  ino_t ino = 0;
  off_t at = 0;
  std::string pending;
  bool first = true;
  for (;;) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && (!fd || st.st_ino != ino)) {
      // The log appeared, or was rotated: the new file is read from its start (but for the
      // file there at the start without --since-start, whose past is not streamed).
      fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      ino = st.st_ino;
      at = first && !g_since_start ? st.st_size : 0;
      pending.clear();
    }
    first = false;
    if (fd) {
      char buf[65536];
      ssize_t n;
      while ((n = ::pread(fd.get(), buf, sizeof buf, at)) > 0) {
        at += n;
        pending.append(buf, static_cast<size_t>(n));
      }
      size_t nl;
      std::string out;
      while ((nl = pending.find('\n')) != std::string::npos) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (tmpl) {
          auto view = event_view(line);
          if (view.is_null()) continue;
          KERN_TRY_ASSIGN(std::string text, render_row(*tmpl, view, "kern events"));
          out += text + "\n";
        } else {
          out += g_format == "json" ? line + "\n" : text_line(line);
        }
      }
      if (!out.empty()) KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void register_events(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("events", "the events of detached boxes as they happen (start, die, restart, ...)");
  c->add_option("--format", g_format,
                "table (default), json (one object a line), or a Go template of .Type .Action .Status .ID "
                ".Actor.ID .Actor.Attributes .Time .TimeNano");
  c->add_flag("--since-start", g_since_start, "the events already in the log first");
  c->callback([&ctx] { ctx.action = run_events; });
}

const VerbRegistration reg{35, "events", &register_events};

}  // namespace events_verb
}  // namespace
}  // namespace kern::cli
