// `kern version [--json]` and `kern --version`: what this binary is (version, commit, build
// type, the libseccomp its seccomp programs were compiled with, what it can do).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "cli/version_info.h"
#include "runtime/seccomp/programs.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {

// What this build can do, in words a user can look up in kern(1).
const std::vector<std::string>& features() {
  static const std::vector<std::string> f = {
      "seccomp-allowlist", "seccomp-denylist", "cgroup-v2",      "images-oci",     "images-docker-archive",
      "layers-gzip",       "layers-zstd",      "warm-kernels",   "kern-run",
  };
  return f;
}

bool g_json = false;

Result<int> run_version() {
  KERN_TRY(sys::write_all(STDOUT_FILENO, g_json ? version_json() : version_text(), "stdout"));
  return 0;
}

void register_version(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("version", "show the version, commit, build and features");
  c->add_flag("--json", g_json, "one JSON object");
  c->callback([&ctx] { ctx.action = run_version; });
}

const VerbRegistration reg{95, "version", &register_version};

}  // namespace

std::string version_text() {
  std::string s = std::string("kern ") + KERN_VERSION + "\n";
  s += std::string("commit: ") + kGitCommit + "\n";
  s += std::string("build: ") + kBuildType + "\n";
  s += std::string("libseccomp: ") + seccomp_programs::libseccomp_version + " (compiled the seccomp programs)\n";
  s += "features:";
  for (const auto& f : features()) s += " " + f;
  return s + "\n";
}

std::string version_json() {
  nlohmann::json j;
  j["version"] = KERN_VERSION;
  j["commit"] = kGitCommit;
  j["build_type"] = kBuildType;
  j["libseccomp"] = std::string(seccomp_programs::libseccomp_version);
  j["features"] = features();
  return j.dump() + "\n";
}

}  // namespace kern::cli
