// `kern compose` (kern-compose(1)): the verb, its global options, and the table its
// subcommands register in. A subcommand lives in a file of its own (compose_config_command.cc
// is `config`) and adds itself with a file-scope ComposeSubcommand, as verbs do (verb.h):
//
//   void register_up(CLI::App& compose, VerbContext& ctx, ComposeGlobals& g) {
//     CLI::App* c = compose.add_subcommand("up", "...");
//     c->callback([&ctx, &g] { ctx.action = [&g] { KERN_TRY_ASSIGN(Project p, load(g)); ... }; });
//   }
//   const ComposeSubcommand up_reg{20, "up", &register_up};
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/compose_model.h"
#include "cli/verb.h"

namespace kern::cli {

// The options of `kern compose` before its subcommand, as Docker Compose spells them.
struct ComposeGlobals {
  std::vector<std::string> files;     // -f/--file, repeatable
  std::string project_name;           // -p/--project-name
  std::string project_directory;      // --project-directory
  std::string env_file;               // --env-file
  std::vector<std::string> profiles;  // --profile, repeatable
};

using ComposeRegisterFn = void (*)(CLI::App& compose, VerbContext& ctx, ComposeGlobals& globals);
struct ComposeSubcommand {
  ComposeSubcommand(int order, const char* name, ComposeRegisterFn fn);
};
struct RegisteredComposeSubcommand {
  int order;
  const char* name;
  ComposeRegisterFn fn;
};
std::vector<RegisteredComposeSubcommand>& compose_subcommands();

// `kern compose FILE up`: a bare word before the subcommand that is not a subcommand's name and
// looks like a file (it exists, or has a "/" or a ".") is the compose file, as if given with
// -f. `head` is the command line's words before any "--", the verb first; rewritten in place.
// Pure but for the existence check.
void move_compose_file_word(std::vector<std::string>& head);

// The process environment as load_project takes it.
std::map<std::string, std::string> process_environment();
// The project the global options name, its warnings printed as "kern: warning: " lines (unless
// `quiet_warnings`).
Result<compose::Project> load(const ComposeGlobals& globals, bool quiet_warnings = false);

}  // namespace kern::cli
