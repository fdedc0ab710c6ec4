// `kern stats [--no-stream] [--format json|table|TEMPLATE] [NAME...]` and `kern top [NAME]`: what
// running boxes use, and a box's processes, as `docker stats` and `docker top` show them
// (cli/box_stats.h). `kern top` without a NAME is a live full screen of every running box on a
// terminal (cli/top_view.h, cli/terminal_screen.h), one plain table elsewhere or with --once.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "cli/box_lookup.h"
#include "cli/box_stats.h"
#include "cli/go_template.h"
#include "cli/terminal_screen.h"
#include "cli/top_view.h"
#include "cli/verb.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace stats_verb {

std::vector<std::string> g_names;
bool g_no_stream = false;
std::string g_format = "table";
std::string g_top_name;
double g_interval = 1.0;
bool g_once = false;

Result<std::vector<BoxRecord>> targets(const std::string& rt) {
  auto live = list_boxes(rt, true);
  if (g_names.empty()) return live;
  std::vector<BoxRecord> out;
  for (const auto& n : g_names) {
    bool found = false;
    for (const auto& b : live)
      if (b.name == n) {
        out.push_back(b);
        found = true;
      }
    if (!found)
      return fail(Error(ErrorKind::config, 0, "no running box named \"" + log::sanitize(n) + "\"")
                      .with_hint("kern ps lists the running boxes"));
  }
  return out;
}

Result<int> run_stats() {
  // "json" stays kern's array (cli/box_stats.h); a template gets Docker's rows.
  std::optional<GoTemplate> tmpl;
  if (g_format != "json") {
    KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(g_format, "kern stats", stats_fields()));
    if (!t.default_table()) tmpl = std::move(t);
  }
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  for (;;) {
    KERN_TRY_ASSIGN(std::vector<BoxRecord> boxes, targets(rt));
    std::vector<BoxUsage> now = sample_usage(boxes, [] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      return true;
    });
    std::string text;
    if (tmpl) {
      std::vector<nlohmann::ordered_json> rows;
      for (const auto& u : now) rows.push_back(stats_row(u));
      KERN_TRY_ASSIGN(text, render_rows(*tmpl, rows, "kern stats", stats_fields()));
    } else {
      text = g_format == "json" ? usage_json(now) : usage_table(now);
    }
    if (!g_no_stream && tty) text = "\033[2J\033[H" + text;  // a screen that is redrawn, as docker stats
    KERN_TRY(sys::write_all(STDOUT_FILENO, text, "stdout"));
    if (g_no_stream) return 0;
  }
}

// kern top without a NAME: every running box, refreshed each --interval.
Result<int> run_top_all() {
  if (!(g_interval >= 0.1 && g_interval <= 3600))
    return fail(Error(ErrorKind::usage, 0, "kern top --interval: " + std::to_string(g_interval) + " is out of range")
                    .with_hint("--interval SECONDS, from 0.1 to 3600 (1 by default)"));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(g_interval * 1000));
  auto frame = [&rt](const std::function<bool()>& wait) -> std::optional<std::string> {
    std::vector<BoxRecord> boxes = list_boxes(rt, true);
    std::vector<BoxUsage> usage = sample_usage(boxes, wait);
    if (usage.size() != boxes.size()) return std::nullopt;
    return top_table(boxes, usage, static_cast<int64_t>(::time(nullptr)));
  };
  if (g_once || ::isatty(STDOUT_FILENO) != 1 || ::isatty(STDIN_FILENO) != 1) {
    auto text = frame([&] {
      std::this_thread::sleep_for(interval);
      return true;
    });
    KERN_TRY(sys::write_all(STDOUT_FILENO, text ? *text : std::string(), "stdout"));
    return 0;
  }
  TerminalScreen screen(STDIN_FILENO, STDOUT_FILENO);
  std::string last = "kern top: reading every running box...\n";
  screen.draw(last);
  for (;;) {
    bool quit = false;
    auto text = frame([&] {
      for (;;) {
        switch (screen.wait(interval)) {
          case TerminalScreen::Wake::elapsed: return true;
          case TerminalScreen::Wake::quit: quit = true; return false;
          case TerminalScreen::Wake::resized: screen.draw(last); continue;
        }
      }
    });
    if (quit) break;
    char head[160];
    std::snprintf(head, sizeof head, "kern top - every %.1fs - q quits\n\n", g_interval);
    last = head + (text ? *text : std::string());
    screen.draw(last);
  }
  int sig = screen.signal();
  return sig ? 128 + sig : 0;
}

Result<int> run_top() {
  if (g_top_name.empty()) return run_top_all();
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_top_name));
  if (record_exited(rec)) return fail(ErrorKind::config, 0, "the box \"" + rec.name + "\" is not running");
  const long tick = ::sysconf(_SC_CLK_TCK);
  std::string out = "PID      PPID     TIME      CMD\n";
  for (pid_t p : box_processes(rec.init_pid)) {
    auto stat = sys::read_file(AT_FDCWD, "/proc/" + std::to_string(p) + "/stat", 4096);
    auto cmd = sys::read_file(AT_FDCWD, "/proc/" + std::to_string(p) + "/cmdline", 4096);
    if (!stat || !cmd) continue;
    std::string rest = stat->substr(stat->rfind(')') + 2);
    std::vector<std::string> f;
    size_t pos = 0;
    while (pos < rest.size() && f.size() < 13) {
      size_t sp = rest.find(' ', pos);
      f.push_back(rest.substr(pos, sp - pos));
      pos = sp == std::string::npos ? rest.size() : sp + 1;
    }
    if (f.size() < 13) continue;
    uint64_t secs = (std::strtoull(f[11].c_str(), nullptr, 10) + std::strtoull(f[12].c_str(), nullptr, 10)) /
                    static_cast<uint64_t>(tick > 0 ? tick : 100);
    for (auto& c : *cmd)
      if (c == '\0') c = ' ';
    while (!cmd->empty() && cmd->back() == ' ') cmd->pop_back();
    char line[128];
    std::snprintf(line, sizeof line, "%-8d %-8s %02llu:%02llu:%02llu  ", p, f[1].c_str(),
                  static_cast<unsigned long long>(secs / 3600), static_cast<unsigned long long>(secs / 60 % 60),
                  static_cast<unsigned long long>(secs % 60));
    out += line + log::sanitize(*cmd) + "\n";
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_stats(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("stats", "what running boxes use: CPU, memory, pids, network, block I/O");
  c->add_option("names", g_names, "box names (default: every running box)");
  c->add_flag("--no-stream", g_no_stream, "one reading (over one second), then exit");
  c->add_option("--format", g_format,
                "table (default), json, or a Go template of .Name .ID .CPUPerc .MemUsage .MemPerc .PIDs .NetIO "
                ".BlockIO .Source (\"table ...\" adds a header)");
  c->callback([&ctx] { ctx.action = run_stats; });
}

void register_top(CLI::App& app, VerbContext& ctx) {
  CLI::App* t = app.add_subcommand("top", "the processes of a running box; without NAME, every box live, full screen");
  t->add_option("name", g_top_name, "the box's name (none: every running box, refreshed)");
  t->add_option("--interval", g_interval, "without NAME: seconds between refreshes (1 by default)");
  t->add_flag("--once", g_once, "without NAME: print one table and exit (as when stdout is not a terminal)");
  t->callback([&ctx] { ctx.action = run_top; });
}

const VerbRegistration reg{30, "stats", &register_stats};
const VerbRegistration reg_top{31, "top", &register_top};

}  // namespace stats_verb
}  // namespace
}  // namespace kern::cli
