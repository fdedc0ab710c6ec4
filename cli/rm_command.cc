// `kern rm [-f] NAME...`: removes exited detached boxes (record and log); -f kills a running
// detached box first, and takes no name as nothing to do (`kern rm -f $(kern ps -aq)`).
#include <csignal>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace rm_verb {

std::vector<std::string> g_names;
bool g_force = false;

Status remove_one(const std::string& rt, const std::string& name) {
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, name));
  if (!rec.detached)
    return fail(Error(ErrorKind::usage, 0, "the box \"" + name + "\" runs in the foreground")
                    .with_hint("it is removed when it ends; stop it with: kern stop " + name));
  if (!record_exited(rec)) {
    if (!g_force)
      return fail(Error(ErrorKind::usage, 0, "the box \"" + name + "\" is running")
                      .with_hint("stop it first (kern stop " + name + "), or force it: kern rm -f " + name));
    (void)signal_box(rt, rec, SIGKILL, true);
    if (!wait_not_running(rt, name, 10000))
      return fail(ErrorKind::setup, 0, "the box \"" + name + "\" did not end after SIGKILL");
  }
  return remove_exited_box(rt, name);
}

Result<int> run_rm() {
  // `kern rm -f $(kern ps -aq)` with no box at all has nothing to do, and does it.
  if (g_names.empty() && !g_force)
    return fail(Error(ErrorKind::usage, 0, "kern rm: which boxes?")
                    .with_hint("kern rm NAME... (kern ps -a lists them); -f with no name does nothing"));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  for (const auto& n : g_names) KERN_TRY(remove_one(rt, n));
  return 0;
}

void register_rm(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("rm", "remove exited detached boxes");
  c->add_option("names", g_names, "box names (with -f, none is no error: kern rm -f $(kern ps -aq))");
  c->add_flag("-f,--force", g_force, "kill a running box first");
  c->callback([&ctx] { ctx.action = run_rm; });
}

const VerbRegistration reg{27, "rm", &register_rm};

}  // namespace rm_verb
}  // namespace
}  // namespace kern::cli
