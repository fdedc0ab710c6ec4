// `kern port NAME [BOXPORT[/PROTO]]`: the ports a running box publishes (--net private's -p), as
// `docker port` prints them: "80/tcp -> 0.0.0.0:8080", one a line.
#include <unistd.h>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace port_verb {

std::string g_name, g_port;

Result<int> run_port() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_name));
  if (record_exited(rec)) return fail(ErrorKind::config, 0, "the box \"" + rec.name + "\" is not running");
  std::string want = g_port.empty() || g_port.find('/') != std::string::npos ? g_port : g_port + "/tcp";
  std::string out;
  for (const auto& p : rec.ports) {
    size_t arrow = p.find("->");
    if (arrow == std::string::npos) continue;
    std::string box = p.substr(arrow + 2), host = p.substr(0, arrow);
    if (!want.empty() && box != want) continue;
    out += box + " -> " + host + "\n";
  }
  if (out.empty() && !want.empty())
    return fail(Error(ErrorKind::config, 0, "the box \"" + rec.name + "\" publishes no port " + log::sanitize(want))
                    .with_hint("kern port " + rec.name + " lists what it publishes (-p with --net private)"));
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_port(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("port", "the ports a running box publishes");
  c->add_option("name", g_name, "the box's name")->required();
  c->add_option("port", g_port, "only this box port (PORT or PORT/tcp|udp)");
  c->callback([&ctx] { ctx.action = run_port; });
}

const VerbRegistration reg{36, "port", &register_port};

}  // namespace port_verb
}  // namespace
}  // namespace kern::cli
