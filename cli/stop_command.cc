// `kern stop NAME... [--all] [--time SECS]`: the box's stop signal (--stop-signal, SIGTERM by
// default) to each box's launcher (which forwards it to the workload), SIGKILL after the grace
// (-t, else the box's --stop-timeout); the box dies with its launcher. A detached box gets
// both signals through its supervisor, which outlives the box and keeps its exited record.
#include <csignal>
#include <optional>
#include <thread>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/registry.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace stop_verb {

std::vector<std::string> g_names;
bool g_all = false;
std::optional<unsigned> g_grace;  // -t; else each box's --stop-timeout (10 s)

bool wait_gone(const BoxRecord& r, unsigned ms) {
  for (unsigned waited = 0; waited < ms; waited += 20) {
    if (!launcher_alive(r)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !launcher_alive(r);
}

Result<int> run_stop() {
  if (g_names.empty() && !g_all) return fail(ErrorKind::usage, 0, "kern stop: name a box, or give --all");
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  auto boxes = list_boxes(rt, true);
  std::vector<BoxRecord> targets;
  for (const auto& n : g_names) {
    bool found = false;
    for (const auto& b : boxes) found |= (b.name == n);
    if (!found) return fail(ErrorKind::config, 0, "no live box named \"" + log::sanitize(n) + "\"");
  }
  for (const auto& b : boxes) {
    bool wanted = g_all;
    for (const auto& n : g_names) wanted |= (b.name == n);
    if (wanted) targets.push_back(b);
  }
  for (const auto& b : targets) {
    if (b.detached) (void)signal_box(rt, b, b.stop_signal, true);
    else ::kill(b.launcher_pid, b.stop_signal);
  }
  for (const auto& b : targets) {
    const unsigned grace = g_grace.value_or(b.stop_timeout);
    const std::string sig = signal_name(b.stop_signal);
    if (b.detached) {
      if (!wait_not_running(rt, b.name, grace * 1000)) {
        log::warning("box \"" + b.name + "\" ignored " + sig + " for " + std::to_string(grace) + " s: killing it");
        (void)signal_box(rt, b, SIGKILL, true);
        (void)wait_not_running(rt, b.name, 5000);
      }
      continue;
    }
    if (!wait_gone(b, grace * 1000)) {
      log::warning("box \"" + b.name + "\" ignored " + sig + " for " + std::to_string(grace) + " s: killing it");
      if (launcher_alive(b)) ::kill(b.launcher_pid, SIGKILL);
      wait_gone(b, 2000);
    }
  }
  return 0;
}

void register_stop(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("stop", "stop boxes: SIGTERM, grace, SIGKILL");
  c->add_option("names", g_names, "box names");
  c->add_flag("--all", g_all, "every live box of this user");
  c->add_option("-t,--time", g_grace, "seconds between the stop signal and SIGKILL (default: the box's --stop-timeout, 10)");
  c->callback([&ctx] { ctx.action = run_stop; });
}

const VerbRegistration reg{21, "stop", &register_stop};

}  // namespace stop_verb
}  // namespace
}  // namespace kern::cli
