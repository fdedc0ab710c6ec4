// `kern volume inspect [-f F] NAME...`: a JSON array of the volumes' Docker objects (CreatedAt,
// Driver, Labels, Mountpoint, Name, Options, Scope); with -f a line per volume from a template.
#include <unistd.h>

#include "cli/go_template.h"
#include "cli/volume_verbs.h"
#include "runtime/sys/fdio.h"

namespace kern::cli::volume_verbs {
namespace {

std::vector<std::string> g_inspect_names;
std::string g_inspect_format;

Result<int> run_inspect() {
  VolumeStore store = volume_store();
  std::vector<nlohmann::ordered_json> all;
  for (const auto& n : g_inspect_names) {
    KERN_TRY_ASSIGN(VolumeInfo v, store.get(n));
    all.push_back(volume_object(v));
  }
  std::string out;
  if (!g_inspect_format.empty()) {
    KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(g_inspect_format, "kern volume inspect", {}));
    KERN_TRY_ASSIGN(out, render_rows(t, all, "kern volume inspect", {}));
  } else {
    out = nlohmann::ordered_json(all).dump(4, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

}  // namespace

void add_inspect(CLI::App* volume, VerbContext& ctx) {
  CLI::App* c = volume->add_subcommand("inspect", "describe volumes as a JSON array");
  c->add_option("names", g_inspect_names, "volume names")->required();
  c->add_option("-f,--format", g_inspect_format, "a Go template per volume: .Name .Mountpoint .CreatedAt .Labels ...");
  c->callback([&ctx] { ctx.action = run_inspect; });
}

}  // namespace kern::cli::volume_verbs
