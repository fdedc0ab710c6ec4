// `kern diff BOX`: what a detached box changed in its root, against its image, as `docker diff`
// prints it: "A /path" added, "C /path" changed, "D /path" deleted, sorted by path.
#include "cli/box_upper.h"
#include "cli/verb.h"
#include "runtime/sys/fdio.h"

#include <unistd.h>

namespace kern::cli {
namespace {
namespace diff_verb {

std::string g_name;

Result<int> run_diff() {
  KERN_TRY_ASSIGN(BoxUpper b, open_box_upper(g_name, "diff"));
  KERN_TRY_ASSIGN(std::vector<oci::UpperChange> changes, oci::upper_changes(b.source()));
  std::string out;
  for (const auto& c : changes) {
    out += c.kind;
    out += ' ';
    out += c.path;
    out += '\n';
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_diff(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("diff", "list what a detached box changed in its root (A, C, D)");
  c->add_option("BOX", g_name, "the box's name")->required();
  c->callback([&ctx] { ctx.action = run_diff; });
}

const VerbRegistration reg{44, "diff", &register_diff};

}  // namespace diff_verb
}  // namespace
}  // namespace kern::cli
