// `kern validate [PATH]`: checks a kern.toml (kern.toml(5)) and names FILE:LINE:COLUMN for
// every problem. PATH defaults to --config's default: KERN_CONFIG, else the XDG location.
// Exit 0 when the file is usable (warnings allowed), 1 when it has errors or cannot be read.
#include <unistd.h>

#include "cli/verb.h"
#include "profiles/profile_loader.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {

std::string g_path;
bool g_quiet = false;

Result<int> run_validate() {
  std::string path = g_path.empty() ? paths::config_file() : g_path;
  KERN_TRY_ASSIGN(profiles::LoadOutcome o, profiles::check_profiles_file(path, profiles::inspect_device));
  std::string shown = log::sanitize(path);
  if (!o.found) return fail(ErrorKind::config, ENOENT, "configuration \"" + shown + "\"");
  for (const auto& d : o.problems) {
    std::string line = o.set.where(d.at) + ": " + d.message;
    if (d.warning) log::warning(line);
    else log::error(line);
  }
  size_t errors = o.error_count();
  if (errors > 0) {
    log::error(shown + ": " + std::to_string(errors) + (errors == 1 ? " error" : " errors"));
    return kExitVerbFailed;
  }
  if (!g_quiet) {
    std::string summary = shown + ": ok (" + std::to_string(o.set.vcpu.size()) + " vcpu, " +
                          std::to_string(o.set.vdisk.size()) + " vdisk, " + std::to_string(o.set.vgpio.size()) +
                          " vgpio)\n";
    KERN_TRY(sys::write_all(STDOUT_FILENO, summary, "stdout"));
  }
  return 0;
}

void register_validate(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("validate", "check a kern.toml (default: the one kern would read)");
  c->add_option("path", g_path, "the file to check");
  c->add_flag("-q,--quiet", g_quiet, "print nothing when the file is valid");
  c->callback([&ctx] { ctx.action = run_validate; });
}

const VerbRegistration reg{71, "validate", &register_validate};

}  // namespace
}  // namespace kern::cli
