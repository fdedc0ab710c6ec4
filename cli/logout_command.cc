// `kern logout [REGISTRY]` / `kern logout --all`: forget the credentials `kern login` stored
// (oci/auth.h) for one registry (default docker.io) or for every one.
#include <unistd.h>

#include "cli/verb.h"
#include "oci/auth.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace logout_verb {

std::string g_registry;
bool g_all = false;

Result<int> run_logout() {
  if (g_all) {
    if (!g_registry.empty()) return fail(ErrorKind::usage, 0, "give a REGISTRY or --all, not both");
    KERN_TRY_ASSIGN(auto had, oci::remove_all_credentials());
    std::string out;
    for (const auto& r : had) out += "Removed login credentials for " + log::sanitize(r) + "\n";
    if (had.empty()) log::note("no stored credentials");
    KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
    return 0;
  }
  KERN_TRY_ASSIGN(std::string registry, oci::registry_host_arg(g_registry.empty() ? "docker.io" : g_registry));
  KERN_TRY_ASSIGN(bool had, oci::remove_credentials(registry));
  if (!had)
    return fail(Error(ErrorKind::image, ENOENT, "not logged in to " + log::sanitize(registry))
                    .with_hint("'kern logout --all' forgets every stored login"));
  KERN_TRY(sys::write_all(STDOUT_FILENO, "Removed login credentials for " + registry + "\n", "stdout"));
  return 0;
}

void register_logout(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("logout", "forget the stored credentials for a registry");
  c->add_option("REGISTRY", g_registry, "registry host (default docker.io)");
  c->add_flag("-a,--all", g_all, "forget the credentials of every registry");
  c->callback([&ctx] { ctx.action = run_logout; });
}

const VerbRegistration reg{48, "logout", &register_logout};

}  // namespace logout_verb
}  // namespace
}  // namespace kern::cli
