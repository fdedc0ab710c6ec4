// `kern ps [-a] [-q] [--json | --format json|table|TEMPLATE] [--no-trunc]`: the live boxes and warm
// kernels registered under the runtime dir (with -a, the exited detached boxes too); stale entries
// are reaped. -q prints the names only, one a line, as `docker ps -q` its ids (`kern rm -f $(kern
// ps -aq)`). A TEMPLATE (cli/go_template.h) sees Docker's fields (cli/ps_fields.h).
#include <unistd.h>

#include <ctime>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/go_template.h"
#include "cli/ps_fields.h"
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
bool g_quiet = false;
std::string g_format;
std::vector<std::string> g_filters;

// --filter label=KEY, label=KEY=VALUE, name=PART (as docker ps: every filter must match).
Result<bool> matches(const BoxRecord& b) {
  for (const auto& f : g_filters) {
    if (f.rfind("label=", 0) == 0) {
      std::string want = f.substr(6);
      size_t eq = want.find('=');
      std::string key = want.substr(0, eq);
      bool hit = false;
      for (const auto& [k, v] : b.labels) hit |= k == key && (eq == std::string::npos || v == want.substr(eq + 1));
      if (!hit) return false;
    } else if (f.rfind("name=", 0) == 0) {
      if (b.name.find(f.substr(5)) == std::string::npos) return false;
    } else {
      return fail(Error(ErrorKind::usage, 0, "kern ps --filter \"" + f + "\": kern filters by label= and name=")
                      .with_hint("--filter label=KEY[=VALUE] or --filter name=PART"));
    }
  }
  return true;
}

Result<int> run_ps() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  auto all = g_all ? list_boxes_all(rt, true) : list_boxes(rt, true);
  std::vector<BoxRecord> boxes;
  for (auto& b : all) {
    KERN_TRY_ASSIGN(bool keep, matches(b));
    if (keep) boxes.push_back(std::move(b));
  }
  reap_stale_lockdowns(rt + "/lockdown");  // records of SIGKILLed launchers (no box's end reads them)
  // "json" stays kern's array of records (what --json prints); a template gets Docker's rows.
  std::optional<GoTemplate> tmpl;
  if (!g_format.empty() && g_format != "json") {
    KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(g_format, "kern ps", ps_fields()));
    if (!t.default_table()) tmpl = std::move(t);
  }
  if (tmpl && (g_quiet || g_json))
    return fail(ErrorKind::usage, 0, "kern ps: --format cannot be combined with " + std::string(g_json ? "--json" : "-q"));
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  std::string out;
  if (tmpl) {
    std::vector<nlohmann::ordered_json> rows;
    for (const auto& b : boxes) rows.push_back(ps_row(b, now, g_no_trunc));
    KERN_TRY_ASSIGN(out, render_rows(*tmpl, rows, "kern ps", ps_fields()));
  } else if (g_quiet) {
    for (const auto& b : boxes) out += b.name + "\n";
  } else if (g_json || g_format == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& b : boxes) arr.push_back(nlohmann::json::parse(record_to_json(b)));
    out = arr.dump() + "\n";  // record_to_json has made every string valid UTF-8
  } else {
    out = ps_table(boxes, now, g_no_trunc, g_all);
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_ps(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("ps", "list live boxes and warm kernels");
  c->add_flag("-a,--all", g_all, "exited detached boxes too, with their exit codes");
  c->add_flag("--json", g_json, "JSON array");
  c->add_flag("-q,--quiet", g_quiet, "names only, one a line");
  c->add_option("-f,--filter", g_filters, "label=KEY[=VALUE] or name=PART (every one must match)");
  c->add_option("--format", g_format,
                "json (as --json), table (the default), or a Go template of .ID .Names .Image .Command .Status "
                ".State .Ports .Labels .CreatedAt .RunningFor .Kind .Pid (\"table ...\" adds a header)");
  c->add_flag("--no-trunc", g_no_trunc, "print images and commands whole");
  c->callback([&ctx] { ctx.action = run_ps; });
}

const VerbRegistration reg{20, "ps", &register_ps};

}  // namespace ps_verb
}  // namespace
}  // namespace kern::cli
