// `kern volume create [NAME] [--label K=V]...`: a new empty volume (no NAME: 64 random hex
// digits), its name printed. An existing NAME is no error, as with docker: its name is printed.
#include <unistd.h>

#include "cli/volume_verbs.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli::volume_verbs {
namespace {

std::string g_create_name;
std::vector<std::string> g_create_labels;

Result<int> run_create() {
  std::vector<std::pair<std::string, std::string>> labels;
  for (const auto& l : g_create_labels) {
    size_t eq = l.find('=');
    if (l.empty() || eq == 0)
      return fail(Error(ErrorKind::usage, 0, "--label " + log::quoted(l) + ": no key")
                      .with_hint("--label KEY=VALUE (or KEY alone, for an empty value)"));
    labels.emplace_back(l.substr(0, eq), eq == std::string::npos ? "" : l.substr(eq + 1));
  }
  std::string name = g_create_name.empty() ? random_volume_name() : g_create_name;
  KERN_TRY(check_volume_name(name, "kern volume create"));
  KERN_TRY_ASSIGN(VolumeInfo v, volume_store().create(name, labels));
  KERN_TRY(sys::write_all(STDOUT_FILENO, v.name + "\n", "stdout"));
  return 0;
}

}  // namespace

void add_create(CLI::App* volume, VerbContext& ctx) {
  CLI::App* c = volume->add_subcommand("create", "make a named volume (no NAME: a random one), print its name");
  c->add_option("name", g_create_name, "the volume's name: [a-zA-Z0-9][a-zA-Z0-9_.-]*");
  c->add_option("-l,--label", g_create_labels, "KEY=VALUE kept with the volume (repeatable)");
  c->callback([&ctx] { ctx.action = run_create; });
}

}  // namespace kern::cli::volume_verbs
