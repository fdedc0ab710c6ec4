// `kern exec [-i] [-t] [-e K=V] [-w DIR] [-u UID[:GID]] NAME [--] CMD...`: a new process in a
// running box, under the lockdown of the box's workload (runtime/box_exec.h). Exit codes as
// kern box: the command's own, 128+N for a signal N, 126/127 when it cannot be executed, 125
// when kern exec itself failed (no such running box included).
#include "cli/exec_command.h"

#include <unistd.h>

#include <cstdlib>

#include "cli/bind_policy.h"
#include "cli/env_file.h"
#include "cli/verb.h"
#include "runtime/box_cwd.h"
#include "runtime/box_exec.h"
#include "runtime/registry.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {

namespace {
Error usage(const std::string& msg) { return Error(ErrorKind::usage, 0, "kern exec: " + msg); }
constexpr const char* kSynopsis = "kern exec [-i] [-t] [-e K=V] [-w DIR] [-u UID[:GID]] NAME -- CMD [ARG...]";
}  // namespace

Result<ExecWords> split_exec_words(const std::vector<std::string>& words, bool has_separator,
                                   const std::vector<std::string>& after_separator) {
  if (words.empty()) return fail(usage("name the box").with_hint(kSynopsis));
  ExecWords w;
  w.name = words[0];
  if (!valid_box_name(w.name)) {
    if (!w.name.empty() && w.name[0] == '-')
      return fail(usage("unknown flag \"" + log::sanitize(w.name) + "\"").with_hint(kSynopsis));
    return fail(usage("invalid box name \"" + log::sanitize(w.name) + "\""));
  }
  if (has_separator) {
    if (words.size() > 1)
      return fail(usage("unexpected \"" + log::sanitize(words[1]) + "\" between the box name and \"--\"")
                      .with_hint("kern exec's flags go before the box name: " + std::string(kSynopsis)));
    w.command = after_separator;
  } else {
    w.command.assign(words.begin() + 1, words.end());
  }
  if (w.command.empty()) return fail(usage("no command").with_hint(kSynopsis));
  return w;
}

Result<std::pair<uid_t, gid_t>> parse_exec_user(const std::string& text) {
  auto number = [](const std::string& s, unsigned long& out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::strtoul(s.c_str(), nullptr, 10);
    return true;
  };
  size_t colon = text.find(':');
  unsigned long uid = 0, gid = 0;
  if (!number(text.substr(0, colon), uid) ||
      (colon != std::string::npos && !number(text.substr(colon + 1), gid)))
    return fail(usage("-u \"" + log::sanitize(text) + "\": give numeric ids, UID[:GID]"));
  if (colon == std::string::npos) gid = uid;
  return std::make_pair(static_cast<uid_t>(uid), static_cast<gid_t>(gid));
}

Result<std::vector<std::string>> exec_env(const std::vector<std::string>& box_env, bool tty,
                                          const std::vector<std::string>& add) {
  for (const auto& e : add) {
    std::string err = check_env_assignment(e);
    if (!err.empty()) return fail(usage("-e: " + err));
  }
  std::vector<std::string> env = box_env;
  if (tty) merge_env(env, {"TERM=xterm"});
  merge_env(env, add);
  KERN_TRY(check_env_bounds(env, "-e"));
  return env;
}

namespace {
namespace exec_verb {

struct ExecOptions {
  bool interactive = false, tty = false;
  std::vector<std::string> env;
  std::string workdir, user;
  std::vector<std::string> words;
};
ExecOptions g_exec;

Result<int> run_exec_verb() {
  KERN_TRY_ASSIGN(ExecWords w, split_exec_words(g_exec.words, has_trailing_separator(), trailing_command()));
  // As kern box -it: a pipe or a file cannot be relayed to a terminal in raw mode.
  if (g_exec.tty && g_exec.interactive && ::isatty(STDIN_FILENO) != 1)
    return fail(usage("-it: the input is not a terminal")
                    .with_hint("drop -t to pass a pipe or file to the command as its standard input"));
  ExecOverrides o;
  o.argv = w.command;
  if (!g_exec.workdir.empty()) {
    KERN_TRY(check_box_cwd(g_exec.workdir, "-w"));
    KERN_TRY_ASSIGN(std::string cwd, normalize_box_path(g_exec.workdir, "-w"));
    o.cwd = cwd;
  }
  if (!g_exec.user.empty()) {
    KERN_TRY_ASSIGN(auto ids, parse_exec_user(g_exec.user));
    o.user = ids;
  }
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(ExecTarget target, find_exec_target(rt, w.name));
  KERN_TRY_ASSIGN(o.env, exec_env(target.lockdown.env, g_exec.tty, g_exec.env));
  ExecPlan plan = exec_plan_for(target.lockdown, o);
  return run_exec(target, plan, ExecTerminal{g_exec.tty, g_exec.interactive});
}

void register_exec(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("exec", "run a command in a running box, under its workload's lockdown");
  // Flags end at the box name, as in docker exec: what follows it is the command's.
  c->prefix_command(true);
  c->add_flag("-i,--interactive", g_exec.interactive, "relay stdin to the terminal (with -t)");
  c->add_flag("-t,--tty", g_exec.tty, "a terminal of the box's own devpts");
  c->add_option("-e,--env", g_exec.env, "K=V, added to the box's environment")->allow_extra_args(false);
  c->add_option("-w,--workdir", g_exec.workdir, "working directory (default: the workload's)");
  c->add_option("-u,--user", g_exec.user, "UID[:GID] in the box (default: the workload's)");
  c->callback([&ctx, c] {
    ctx.table = ExitTable::box;
    g_exec.words = c->remaining();
    ctx.action = run_exec_verb;
  });
}

const VerbRegistration reg{22, "exec", &register_exec};

}  // namespace exec_verb
}  // namespace
}  // namespace kern::cli
