// `kern compose config` (kern-compose(1)): what kern understood of the compose files, in the
// shape of `docker compose config`; --services, --volumes, --format json, -q to validate only.
#include <unistd.h>

#include "cli/compose_command.h"
#include "cli/compose_config.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {
namespace compose_config_verb {

bool g_services = false, g_volumes = false, g_quiet = false;
std::string g_format = "yaml";

Result<int> run_config(const ComposeGlobals& globals) {
  KERN_TRY_ASSIGN(compose::Project p, load(globals));
  KERN_TRY(compose::check_one_pod(p));
  if (g_quiet) return 0;
  std::string out;
  if (g_services) {
    for (const auto& s : p.services) out += s.name + "\n";
  } else if (g_volumes) {
    for (const auto& v : p.volumes) out += v.key + "\n";
  } else {
    compose::Node n = compose::project_node(p);
    out = g_format == "json" ? compose::to_json(n) : compose::to_yaml(n);
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_config(CLI::App& compose, VerbContext& ctx, ComposeGlobals& globals) {
  CLI::App* c = compose.add_subcommand("config", "print the project as kern understood it, or validate it (-q)");
  c->add_flag("--services", g_services, "print the service names, one a line");
  c->add_flag("--volumes", g_volumes, "print the volume names, one a line");
  c->add_option("--format", g_format, "yaml (default) or json")->check(CLI::IsMember({"yaml", "json"}));
  c->add_flag("-q,--quiet", g_quiet, "validate only: print nothing");
  c->callback([&ctx, &globals] {
    ctx.table = ExitTable::box;
    ctx.action = [&globals] { return run_config(globals); };
  });
}

const ComposeSubcommand reg{10, "config", &register_config};

}  // namespace compose_config_verb
}  // namespace
}  // namespace kern::cli
