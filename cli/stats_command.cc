// `kern stats [--no-stream] [--format json] [NAME...]` and `kern top NAME`: what running boxes use,
// and a box's processes, as `docker stats` and `docker top` show them (cli/box_stats.h).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli/box_lookup.h"
#include "cli/box_stats.h"
#include "cli/verb.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/timing.h"

namespace kern::cli {
namespace {
namespace stats_verb {

std::vector<std::string> g_names;
bool g_no_stream = false;
std::string g_format = "table";
std::string g_top_name;

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
  if (g_format != "table" && g_format != "json")
    return fail(Error(ErrorKind::usage, 0, "kern stats --format: \"" + log::sanitize(g_format) + "\" is not table or json")
                    .with_hint("--format json"));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  for (;;) {
    KERN_TRY_ASSIGN(std::vector<BoxRecord> boxes, targets(rt));
    std::vector<BoxUsage> before;
    for (const auto& b : boxes) before.push_back(read_usage(b));
    uint64_t t0 = monotonic_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    uint64_t dt = monotonic_ns() - t0;
    std::vector<BoxUsage> now;
    for (size_t i = 0; i < boxes.size(); ++i) {
      BoxUsage u = read_usage(boxes[i]);
      set_cpu_percent(u, before[i], dt);
      now.push_back(std::move(u));
    }
    std::string text = g_format == "json" ? usage_json(now) : usage_table(now);
    if (!g_no_stream && tty) text = "\033[2J\033[H" + text;  // a screen that is redrawn, as docker stats
    KERN_TRY(sys::write_all(STDOUT_FILENO, text, "stdout"));
    if (g_no_stream) return 0;
  }
}

Result<int> run_top() {
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
  c->add_option("--format", g_format, "table (default) or json");
  c->callback([&ctx] { ctx.action = run_stats; });
}

void register_top(CLI::App& app, VerbContext& ctx) {
  CLI::App* t = app.add_subcommand("top", "the processes of a running box");
  t->add_option("name", g_top_name, "the box's name")->required();
  t->callback([&ctx] { ctx.action = run_top; });
}

const VerbRegistration reg{30, "stats", &register_stats};
const VerbRegistration reg_top{31, "top", &register_top};

}  // namespace stats_verb
}  // namespace
}  // namespace kern::cli
