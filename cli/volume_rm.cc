// `kern volume rm [-f] NAME...`: removes volumes and their data, each name printed as it goes.
// A volume a box mounts (running, or exited and not yet removed with kern rm) is refused, naming
// the boxes, -f or not; with -f an unknown name is no error.
#include <unistd.h>

#include "cli/volume_use.h"
#include "cli/volume_verbs.h"
#include "runtime/sys/fdio.h"

namespace kern::cli::volume_verbs {
namespace {

std::vector<std::string> g_rm_names;
bool g_rm_force = false;

Result<int> run_rm() {
  VolumeStore store = volume_store();
  auto users = volume_users();
  for (const auto& n : g_rm_names) {
    auto v = store.get(n);
    if (!v) {
      if (g_rm_force) continue;
      return fail(std::move(v).error());
    }
    if (auto u = users.find(n); u != users.end()) return fail(volume_in_use(n, u->second));
    KERN_TRY(store.remove(n));
    KERN_TRY(sys::write_all(STDOUT_FILENO, n + "\n", "stdout"));
  }
  return 0;
}

}  // namespace

void add_rm(CLI::App* volume, VerbContext& ctx) {
  CLI::App* c = volume->add_subcommand("rm", "remove volumes no box uses, with their data");
  c->alias("remove");
  c->add_option("names", g_rm_names, "volume names")->required();
  c->add_flag("-f,--force", g_rm_force, "a volume that does not exist is no error");
  c->callback([&ctx] { ctx.action = run_rm; });
}

}  // namespace kern::cli::volume_verbs
