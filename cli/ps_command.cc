// `kern ps [--json]`: the live boxes registered under the runtime dir; stale entries are reaped.
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {

bool g_json = false;

std::string age(int64_t started) {
  int64_t s = ::time(nullptr) - started;
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  return std::to_string(s / 3600) + "h";
}

Result<int> run_ps() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  auto boxes = list_boxes(rt, true);
  std::string out;
  if (g_json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& b : boxes) arr.push_back(nlohmann::json::parse(record_to_json(b)));
    out = arr.dump() + "\n";
  } else {
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %-8s %-8s %-6s %-28s %s\n", "NAME", "KIND", "PID", "AGE", "IMAGE", "COMMAND");
    out = line;
    for (const auto& b : boxes) {
      std::snprintf(line, sizeof line, "%-24s %-8s %-8d %-6s %-28s %s\n", b.name.c_str(), b.kind.c_str(),
                    b.init_pid, age(b.started_unix).c_str(), b.image.empty() ? "-" : b.image.c_str(),
                    log::sanitize(b.command).c_str());
      out += line;
    }
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_ps(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("ps", "list live boxes");
  c->add_flag("--json", g_json, "JSON array");
  c->callback([&ctx] { ctx.action = run_ps; });
}

const VerbRegistration reg{20, "ps", &register_ps};

}  // namespace
}  // namespace kern::cli
