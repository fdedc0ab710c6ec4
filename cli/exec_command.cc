// `kern exec [-i] [-t] [-e K[=V]] [--env-file F] [-w DIR] [-u USER[:GID]] NAME [--] CMD...`: a new
// process in a running box, under the lockdown of the box's workload (runtime/box_exec.h). Exit codes as
// kern box: the command's own, 128+N for a signal N, 126/127 when it cannot be executed, 125
// when kern exec itself failed (no such running box included). Its -e, --env-file, -w and -u are
// read by the same functions as kern box's, so the same words give the same answer.
#include "cli/exec_command.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "cli/bind_policy.h"
#include "cli/env_file.h"
#include "cli/spec_builder.h"
#include "cli/usage_errors.h"
#include "cli/verb.h"
#include "runtime/box_exec.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {

namespace {
Error usage(const std::string& msg) { return Error(ErrorKind::usage, 0, "kern exec: " + msg); }
constexpr const char* kSynopsis =
    "kern exec [-i] [-t] [-e K[=V]] [--env-file F] [-w DIR] [-u USER[:GID]] NAME -- CMD [ARG...]";
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

Result<std::vector<std::string>> exec_env(const std::vector<std::string>& box_env, bool tty,
                                          const std::vector<std::string>& env_files,
                                          const std::vector<std::string>& add, const CallerEnv& caller) {
  std::vector<std::string> env = box_env;
  if (tty) merge_env(env, {"TERM=xterm"});
  KERN_TRY(merge_env_flags(env, env_files, add, caller));
  return env;
}

namespace {
namespace exec_verb {

struct ExecOptions {
  bool interactive = false, tty = false;
  std::vector<std::string> env, env_files;
  std::optional<std::string> workdir, user;  // an empty value is refused, as kern box's
  std::vector<std::string> words;
};
ExecOptions g_exec;

// The box's root directory, read through the process its namespaces are joined through (box
// init is not dumpable: runtime/box_join.h): opened by pid, then that process's pidfd shows the
// pid was still it (a reused pid would have needed it to end first).
Result<UniqueFd> open_box_root(const ExecTarget& t) {
  KERN_TRY_ASSIGN(UniqueFd root, sys::open_at(AT_FDCWD, "/proc/" + std::to_string(t.join_pid) + "/root",
                                              O_PATH | O_DIRECTORY));
  if (::syscall(SYS_pidfd_send_signal, t.join_pidfd.get(), 0, nullptr, 0) != 0)
    return fail_errno("pidfd_send_signal (the box's workload)");
  return root;
}

// Whether the box maps more than its id 0 (kern box --uid-range), read from init's uid_map; when
// the map cannot be read, the kernel is left to refuse an unmapped id.
bool maps_a_range(const ExecTarget& t) {
  auto map = sys::read_regular_file(AT_FDCWD, "/proc/" + std::to_string(t.lockdown.init_pid) + "/uid_map", 4096);
  if (!map) return true;
  std::istringstream in(*map);
  unsigned long inside = 0, outside = 0, count = 0;
  while (in >> inside >> outside >> count)
    if (inside != 0 || count > 1) return true;
  return false;
}

Result<int> run_exec_verb() {
  KERN_TRY_ASSIGN(ExecWords w, split_exec_words(g_exec.words, has_trailing_separator(), trailing_command()));
  // As kern box -it: a pipe or a file cannot be relayed to a terminal in raw mode.
  if (g_exec.tty && g_exec.interactive && ::isatty(STDIN_FILENO) != 1)
    return fail(usage("-it: the input is not a terminal")
                    .with_hint("drop -t to pass a pipe or file to the command as its standard input"));
  ExecOverrides o;
  o.argv = w.command;
  if (g_exec.workdir) {
    KERN_TRY_ASSIGN(o.cwd, workdir_flag(*g_exec.workdir, "the workload's"));
  }
  if (g_exec.user && g_exec.user->empty())
    return fail(empty_value("-u/--user", "UID[:GID] or a user name", "the workload's"));
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(ExecTarget target, find_exec_target(rt, w.name));
  if (g_exec.user) {
    // A name is looked up in the box's own /etc/passwd, as kern box looks it up in its image's.
    PasswdLookup lookup = [&target](const std::string& name) -> std::optional<std::pair<unsigned long, unsigned long>> {
      auto root = open_box_root(target);
      return root ? passwd_ids(root->get(), name) : std::nullopt;
    };
    KERN_TRY_ASSIGN(o.user, resolve_user_ids(*g_exec.user, lookup, maps_a_range(target)));
  }
  KERN_TRY_ASSIGN(o.env, exec_env(target.lockdown.env, g_exec.tty, g_exec.env_files, g_exec.env,
                                  caller_environment()));
  ExecPlan plan = exec_plan_for(target.lockdown, o);
  return run_exec(target, plan, ExecTerminal{g_exec.tty, g_exec.interactive});
}

void register_exec(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("exec", "run a command in a running box, under its workload's lockdown");
  // Flags end at the box name, as in docker exec: what follows it is the command's.
  c->prefix_command(true);
  c->add_flag("-i,--interactive", g_exec.interactive, "relay stdin to the terminal (with -t)");
  c->add_flag("-t,--tty", g_exec.tty, "a terminal of the box's own devpts");
  c->add_option("-e,--env", g_exec.env, "K=V, or K for the caller's K, added to the box's environment")
      ->allow_extra_args(false);
  c->add_option("--env-file", g_exec.env_files, "file of K=V lines, as kern box's")->allow_extra_args(false);
  c->add_option("-w,--workdir", g_exec.workdir, "working directory (default: the workload's)");
  c->add_option("-u,--user", g_exec.user, "UID[:GID] or NAME[:GID] in the box (default: the workload's)");
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
