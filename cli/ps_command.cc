// `kern ps [-a] [--json] [--no-trunc]`: the live boxes and warm kernels registered under the
// runtime dir (with -a, the exited detached boxes too); stale entries are reaped.
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/ps_table.h"
#include "cli/verb.h"
#include "runtime/box_lockdown.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace ps_verb {

bool g_json = false;
bool g_no_trunc = false;
bool g_all = false;

Result<int> run_ps() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  auto boxes = g_all ? list_boxes_all(rt, true) : list_boxes(rt, true);
  reap_stale_lockdowns(rt + "/lockdown");  // records of SIGKILLed launchers (no box's end reads them)
  std::string out;
  if (g_json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& b : boxes) arr.push_back(nlohmann::json::parse(record_to_json(b)));
    out = arr.dump() + "\n";  // record_to_json has made every string valid UTF-8
  } else {
    out = ps_table(boxes, static_cast<int64_t>(::time(nullptr)), g_no_trunc, g_all);
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_ps(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("ps", "list live boxes and warm kernels");
  c->add_flag("-a,--all", g_all, "exited detached boxes too, with their exit codes");
  c->add_flag("--json", g_json, "JSON array");
  c->add_flag("--no-trunc", g_no_trunc, "print images and commands whole");
  c->callback([&ctx] { ctx.action = run_ps; });
}

const VerbRegistration reg{20, "ps", &register_ps};

}  // namespace ps_verb
}  // namespace
}  // namespace kern::cli
