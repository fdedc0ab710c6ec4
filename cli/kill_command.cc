// `kern kill [-s SIG] NAME...`: sends a signal (default SIGKILL) to each box's workload.
#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace kill_verb {

std::vector<std::string> g_names;
std::string g_signal = "KILL";

Result<int> run_kill() {
  int sig = parse_signal(g_signal);
  if (sig == 0) return fail(ErrorKind::usage, 0, "kern kill: \"" + log::sanitize(g_signal) + "\" is not a signal");
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  for (const auto& n : g_names) {
    KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, n));
    KERN_TRY(signal_box(rt, rec, sig));
  }
  return 0;
}

void register_kill(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("kill", "send a signal to boxes (default SIGKILL)");
  c->add_option("names", g_names, "box names")->required();
  c->add_option("-s,--signal", g_signal, "signal name or number (default KILL)");
  c->callback([&ctx] { ctx.action = run_kill; });
}

const VerbRegistration reg{26, "kill", &register_kill};

}  // namespace kill_verb
}  // namespace
}  // namespace kern::cli
