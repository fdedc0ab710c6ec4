// The `kern compose` verb and its subcommand table (compose_command.h).
#include "cli/compose_command.h"

#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>

#include "runtime/sys/log.h"

extern char** environ;

namespace kern::cli {

std::vector<RegisteredComposeSubcommand>& compose_subcommands() {
  static std::vector<RegisteredComposeSubcommand> table;
  return table;
}

ComposeSubcommand::ComposeSubcommand(int order, const char* name, ComposeRegisterFn fn) {
  compose_subcommands().push_back({order, name, fn});
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

void move_compose_file_word(std::vector<std::string>& head) {
  if (head.empty() || head.front() != "compose") return;
  static const char* const with_value[] = {"-f", "--file", "-p", "--project-name", "--project-directory",
                                           "--env-file", "--profile"};
  for (size_t i = 1; i < head.size(); ++i) {
    const std::string& w = head[i];
    if (w.size() > 1 && w[0] == '-') {
      if (w.find('=') == std::string::npos && std::find(std::begin(with_value), std::end(with_value), w) != std::end(with_value))
        ++i;  // its value
      continue;
    }
    for (const auto& s : compose_subcommands())
      if (w == s.name) return;
    struct stat st{};
    bool looks_like_file = w.find('/') != std::string::npos || w.find('.') != std::string::npos ||
                           ::stat(w.c_str(), &st) == 0;
    if (!looks_like_file) return;  // a misspelt subcommand: CLI11 names it
    head.insert(head.begin() + static_cast<std::ptrdiff_t>(i), "-f");
    return;
  }
}

Result<compose::Project> load(const ComposeGlobals& g, bool quiet_warnings) {
  compose::LoadOptions o{g.files, g.project_name, g.project_directory, g.env_file, g.profiles};
  KERN_TRY_ASSIGN(compose::Project p, compose::load_project(o, process_environment()));
  if (!quiet_warnings)
    for (const auto& w : p.warnings) log::warning(w);
  return p;
}

namespace {
namespace compose_verb {

ComposeGlobals g_globals;

void register_compose(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("compose", "run a multi-box application from a compose file");
  c->require_subcommand(1);
  c->add_option("-f,--file", g_globals.files, "a compose file (repeatable; merged in order)")->allow_extra_args(false);
  c->add_option("-p,--project-name", g_globals.project_name, "the project name");
  c->add_option("--project-directory", g_globals.project_directory,
                "the project directory (default: the first file's)");
  c->add_option("--env-file", g_globals.env_file,
                "the file of variables for interpolation (default: PROJECT_DIR/.env)");
  c->add_option("--profile", g_globals.profiles, "a profile to enable (repeatable)")->allow_extra_args(false);
  auto subs = compose_subcommands();
  std::stable_sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& s : subs) s.fn(*c, ctx, g_globals);
}

const VerbRegistration reg{38, "compose", &register_compose};

}  // namespace compose_verb
}  // namespace
}  // namespace kern::cli
