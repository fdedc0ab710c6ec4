// `kern volume prune [-f]`: removes every volume no box mounts (running, or exited and kept),
// printing each name and the space reclaimed, as docker volume prune -a does. kern never asks:
// -f is accepted for docker's habit.
#include <unistd.h>

#include "cli/volume_use.h"
#include "cli/volume_verbs.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/human_size.h"
#include "runtime/sys/log.h"

namespace kern::cli::volume_verbs {
namespace {

bool g_prune_force = false, g_prune_all = false;

Result<int> run_prune() {
  VolumeStore store = volume_store();
  auto users = volume_users();
  std::string out;
  uint64_t bytes = 0;
  for (const auto& v : store.list()) {
    if (users.count(v.name)) continue;
    uint64_t size = tree_bytes(v.mountpoint);
    if (auto st = store.remove(v.name); !st) {
      // A box starting with it holds it (kind config): in use, as a listed box's is.
      if (st.error().kind() != ErrorKind::config) log::error(st.error());
      continue;
    }
    if (out.empty()) out = "Deleted Volumes:\n";
    out += v.name + "\n";
    bytes += size;
  }
  if (!out.empty()) out += "\n";
  out += "Total reclaimed space: " + sys::human_size(bytes) + "\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

}  // namespace

void add_prune(CLI::App* volume, VerbContext& ctx) {
  CLI::App* c = volume->add_subcommand("prune", "remove every volume no box uses");
  c->add_flag("-f,--force", g_prune_force, "accepted: kern does not ask");
  c->add_flag("-a,--all", g_prune_all, "accepted: kern's volumes all have names, and all are pruned");
  c->callback([&ctx] { ctx.action = run_prune; });
}

}  // namespace kern::cli::volume_verbs
