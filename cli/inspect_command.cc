// `kern inspect [-f TEMPLATE] NAME...`: a JSON array, one object per box (state, pids, times, exit
// code, the spec's summary and the enforcement read back at start); with a template
// (cli/go_template.h), a line per box from that object and Docker's spellings beside it
// (cli/docker_views.h: {{.State.Pid}}, {{.Config.Labels}}).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/box_lookup.h"
#include "cli/docker_views.h"
#include "cli/go_template.h"
#include "cli/verb.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace inspect_verb {

std::vector<std::string> g_names;
bool g_json = true;
std::string g_format;

Result<int> run_inspect() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  if (!g_format.empty()) {
    // The fields are checked against each object as it is printed: they differ with the box.
    KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(g_format, "kern inspect", {}));
    std::vector<nlohmann::ordered_json> rows;
    for (const auto& n : g_names) {
      KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, n));
      rows.push_back(inspect_view(rec, inspect_json(rec, detached_log_path(rt, rec.name))));
    }
    KERN_TRY_ASSIGN(std::string out, render_rows(t, rows, "kern inspect", {}));
    KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
    return 0;
  }
  nlohmann::json all = nlohmann::json::array();
  for (const auto& n : g_names) {
    KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, n));
    all.push_back(nlohmann::json::parse(inspect_json(rec, detached_log_path(rt, rec.name))));
  }
  // inspect_json made every string valid UTF-8.
  std::string out = all.dump(2) + "\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_inspect(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("inspect", "describe boxes as JSON");
  c->add_option("names", g_names, "box names")->required();
  c->add_option("-f,--format", g_format,
                "a Go template per box: kern's keys and Docker's .Id .Name .State.Pid .State.Status "
                ".State.ExitCode .Config.Labels ... ({{json .}} shows them all)");
  c->add_flag("--json", g_json, "the output is JSON already (accepted for symmetry with ps and wait)");
  c->callback([&ctx] { ctx.action = run_inspect; });
}

const VerbRegistration reg{28, "inspect", &register_inspect};

}  // namespace inspect_verb
}  // namespace
}  // namespace kern::cli
