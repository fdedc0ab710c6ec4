// `kern volume ls [-q] [--format F]`: the volumes, a table of DRIVER and VOLUME NAME as docker
// volume ls prints it; -q the names only; --format a Go template (cli/go_template.h) of .Name
// .Driver .Mountpoint .Scope .CreatedAt .Labels (and "json", "table ...").
#include <unistd.h>

#include "cli/go_template.h"
#include "cli/volume_verbs.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli::volume_verbs {
namespace {

bool g_ls_quiet = false;
std::string g_ls_format;

const std::vector<TemplateField>& ls_fields() {
  static const std::vector<TemplateField> f = {{"Name", "VOLUME NAME"},     {"Driver", "DRIVER"},
                                               {"Mountpoint", "MOUNTPOINT"}, {"Scope", "SCOPE"},
                                               {"CreatedAt", "CREATED"},    {"Labels", "LABELS"}};
  return f;
}

Result<int> run_ls() {
  if (g_ls_quiet && !g_ls_format.empty()) return fail(ErrorKind::usage, 0, "--format cannot be combined with -q");
  std::string text = g_ls_format.empty() || g_ls_format == "table" ? "table {{.Driver}}\\t{{.Name}}" : g_ls_format;
  KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(text, "kern volume ls", ls_fields()));
  std::vector<nlohmann::ordered_json> rows;
  std::string out;
  for (const auto& v : volume_store().list()) {
    if (g_ls_quiet) {
      out += v.name + "\n";
      continue;
    }
    nlohmann::ordered_json o = volume_object(v);
    if (o["Labels"].is_null()) o["Labels"] = nlohmann::ordered_json::object();
    rows.push_back(std::move(o));
  }
  if (!g_ls_quiet) {
    KERN_TRY_ASSIGN(out, render_rows(t, rows, "kern volume ls", ls_fields()));
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, log::sanitize_lines(out), "stdout"));
  return 0;
}

}  // namespace

void add_ls(CLI::App* volume, VerbContext& ctx) {
  CLI::App* c = volume->add_subcommand("ls", "list the volumes");
  c->alias("list");
  c->add_flag("-q,--quiet", g_ls_quiet, "the names only");
  c->add_option("--format", g_ls_format,
                "a Go template of {{.Name}} {{.Driver}} {{.Mountpoint}} {{.Scope}} {{.CreatedAt}} {{.Labels}}; "
                "\"table ...\" adds a header; \"json\" one object a line");
  c->callback([&ctx] { ctx.action = run_ls; });
}

}  // namespace kern::cli::volume_verbs
