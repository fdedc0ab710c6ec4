// `kern generate systemd NAME [--files]`: the systemd user unit that makes a detached box again as
// it was created, at boot or login (cli/systemd_unit.h). Reads the box's record; changes nothing
// unless --files writes the unit into the user's systemd directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <nlohmann/json.hpp>

#include "cli/box_lookup.h"
#include "cli/systemd_unit.h"
#include "cli/verb.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace generate_verb {

std::string g_name;
bool g_files = false;
std::optional<unsigned> g_stop_timeout;  // -t; else the box's --stop-timeout

Result<int> run_systemd() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_name));
  auto d = nlohmann::json::parse(rec.detail.empty() ? "{}" : rec.detail, nullptr, false);
  if (!rec.detached || d.is_discarded() || !d.contains("create_argv") || !d["create_argv"].is_array() ||
      d["create_argv"].empty())
    return fail(Error(ErrorKind::usage, 0, "kern generate systemd: the box \"" + g_name + "\" does not say how it was made")
                    .with_hint("only a detached box (kern box -d) made by this kern has a unit; make it again with kern box -d"));
  UnitInput in;
  in.name = rec.name;
  in.kern_path = d.value("kern", "");
  if (in.kern_path.empty() || in.kern_path[0] != '/') in.kern_path = "/usr/bin/kern";
  for (const auto& w : d["create_argv"])
    if (w.is_string()) in.create_argv.push_back(w.get<std::string>());
  in.stop_timeout_s = g_stop_timeout.value_or(rec.stop_timeout);
  std::string unit = systemd_unit(in);
  if (!g_files) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, unit, "stdout"));
    return 0;
  }
  const char* xdg = ::getenv("XDG_CONFIG_HOME");
  const char* home = ::getenv("HOME");
  std::string base = xdg && *xdg == '/' ? xdg : home && *home == '/' ? std::string(home) + "/.config" : "";
  if (base.empty())
    return fail(Error(ErrorKind::usage, 0, "kern generate systemd --files: neither XDG_CONFIG_HOME nor HOME is set")
                    .with_hint("print the unit instead: kern generate systemd " + g_name + " > FILE"));
  std::string dir = base + "/systemd/user";
  for (const std::string& d2 : {base, base + "/systemd", dir})
    if (::mkdir(d2.c_str(), 0755) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + d2 + "\"");
  std::string path = dir + "/kern-" + rec.name + ".service";
  KERN_TRY(sys::write_file(AT_FDCWD, path, unit, 0644));
  KERN_TRY(sys::write_all(STDOUT_FILENO, path + "\n", "stdout"));
  return 0;
}

void register_generate(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("generate", "generate files for other tools: a systemd unit of a box");
  c->require_subcommand(1);
  CLI::App* s = c->add_subcommand("systemd", "the systemd user unit that starts a detached box at boot or login");
  s->add_option("name", g_name, "the box's name")->required();
  s->add_flag("--files", g_files, "write kern-NAME.service into ~/.config/systemd/user and print its path");
  s->add_option("-t,--stop-timeout", g_stop_timeout, "seconds kern stop waits before SIGKILL (default: the box's)");
  s->callback([&ctx] { ctx.action = run_systemd; });
}

const VerbRegistration reg{29, "generate", &register_generate};

}  // namespace generate_verb
}  // namespace
}  // namespace kern::cli
