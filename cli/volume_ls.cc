// `kern volume ls [-q] [--format F] [-f FILTER]...`: the volumes, a table of DRIVER and VOLUME
// NAME as docker volume ls prints it; -q the names only; --format a Go template
// (cli/go_template.h) of .Name .Driver .Mountpoint .Scope .CreatedAt .Labels (and "json",
// "table ..."); --filter docker's dangling=, name=, label= and driver=, each kind ANDed, the
// values of one kind ORed.
#include <unistd.h>

#include <algorithm>

#include "cli/go_template.h"
#include "cli/volume_use.h"
#include "cli/volume_verbs.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli::volume_verbs {
namespace {

bool g_ls_quiet = false;
std::string g_ls_format;
std::vector<std::string> g_ls_filters;

struct LsFilters {
  int dangling = -1;  // -1 either, 1 only volumes no box uses, 0 only used ones
  std::vector<std::string> names, labels, drivers;
};

Result<LsFilters> parse_ls_filters() {
  LsFilters f;
  for (const auto& text : g_ls_filters) {
    size_t eq = text.find('=');
    std::string key = text.substr(0, eq), val = eq == std::string::npos ? "" : text.substr(eq + 1);
    if (key == "dangling" && (val == "true" || val == "false" || val == "1" || val == "0")) f.dangling = val == "true" || val == "1";
    else if (key == "name" && eq != std::string::npos) f.names.push_back(val);
    else if (key == "label" && !val.empty()) f.labels.push_back(val);
    else if (key == "driver" && !val.empty()) f.drivers.push_back(val);
    else
      return fail(Error(ErrorKind::usage, 0, "--filter " + log::quoted(text) + ": unknown filter")
                      .with_hint("kern volume ls filters by dangling=true|false, name=PART, label=KEY[=VALUE] and "
                                 "driver=local"));
  }
  return f;
}

bool has_label(const VolumeInfo& v, const std::string& want) {
  size_t eq = want.find('=');
  for (const auto& [k, val] : v.labels)
    if (k == want.substr(0, eq) && (eq == std::string::npos || val == want.substr(eq + 1))) return true;
  return false;
}

bool keep(const VolumeInfo& v, const LsFilters& f, bool used) {
  if (f.dangling == 1 && used) return false;
  if (f.dangling == 0 && !used) return false;
  auto any = [](const std::vector<std::string>& wants, auto&& match) {
    if (wants.empty()) return true;
    for (const auto& w : wants)
      if (match(w)) return true;
    return false;
  };
  return any(f.names, [&](const std::string& w) { return v.name.find(w) != std::string::npos; }) &&
         std::all_of(f.labels.begin(), f.labels.end(), [&](const std::string& w) { return has_label(v, w); }) &&
         any(f.drivers, [](const std::string& w) { return w == "local"; });
}

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
  KERN_TRY_ASSIGN(LsFilters filters, parse_ls_filters());
  auto users = filters.dangling >= 0 ? volume_users() : std::map<std::string, std::vector<std::string>>{};
  std::vector<nlohmann::ordered_json> rows;
  std::string out;
  for (const auto& v : volume_store().list()) {
    if (!keep(v, filters, users.count(v.name) > 0)) continue;
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
  c->add_option("-f,--filter", g_ls_filters, "dangling=true|false, name=PART, label=KEY[=VALUE], driver=local (repeatable)");
  c->callback([&ctx] { ctx.action = run_ls; });
}

}  // namespace kern::cli::volume_verbs
