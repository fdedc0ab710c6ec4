// `kern version [--json]` and `kern --version`: what this binary is (version, commit, build
// type, the libseccomp its seccomp programs were compiled with, what it can do). And `kern
// completion bash|zsh|fish|--list KIND`: the shell completion scripts made from kern's own
// command line (cli/completions/), with the walk of the CLI11 app into their model. The two
// verbs that describe this binary share a file because every file that includes CLI11 costs
// each kern start the constructors of CLI11's validators (about 4,500 instructions).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/completions/completion_names.h"
#include "cli/completions/completion_scripts.h"
#include "cli/verb.h"
#include "cli/version_info.h"
#include "runtime/seccomp/programs.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {
namespace version_verb {

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

// The options of `app` itself and of its option groups (nameless subcommands: their flags are
// the verb's own), hidden ones (no group) left out.
void collect_options(const CLI::App& app, std::vector<const CLI::Option*>& out) {
  for (const CLI::Option* op : app.get_options())
    if (!op->get_group().empty()) out.push_back(op);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return s->get_name().empty(); }))
    collect_options(*sub, out);
}

CompletionFlag flag_of(const CLI::Option& op) {
  CompletionFlag f;
  for (const auto& s : op.get_snames()) f.names.push_back("-" + s);
  for (const auto& l : op.get_lnames()) f.names.push_back("--" + l);
  // A flag expects no value (CLI11's add_flag sets expected(0)); `--net` expects 0 or 1.
  if (op.get_type_size_max() > 0 && op.get_expected_max() > 0)
    f.value = op.get_expected_min() == 0 ? CompletionFlag::Value::optional : CompletionFlag::Value::required;
  f.help = op.get_description();
  if (f.value != CompletionFlag::Value::none) f.kind = flag_value_kind(f.names);
  return f;
}

void walk(const CLI::App& app, const std::string& path, std::vector<CompletionVerb>& out) {
  CompletionVerb v;
  v.path = path;
  v.help = app.get_description();
  std::vector<const CLI::Option*> ops;
  collect_options(app, ops);
  for (const CLI::Option* op : ops)
    if (!op->get_positional()) v.flags.push_back(flag_of(*op));
  v.positional = positional_kind(path);
  auto subs = app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); });
  for (const CLI::App* s : subs) v.subverbs.push_back(s->get_name());
  if (path.empty()) v.subverbs.push_back("help");  // app.cc's own word: `kern help VERB`
  out.push_back(std::move(v));
  for (const CLI::App* s : subs) walk(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

struct CompletionFlags {
  std::string shell, list;
};

Result<int> run_completion(const CompletionFlags& f) {
  if (!f.list.empty()) {
    if (!f.shell.empty()) return fail(ErrorKind::usage, 0, "kern completion: give a shell or --list, not both");
    KERN_TRY_ASSIGN(std::string names, completion_names(f.list));
    KERN_TRY(sys::write_all(STDOUT_FILENO, names, "stdout"));
    return 0;
  }
  if (f.shell != "bash" && f.shell != "zsh" && f.shell != "fish")
    return fail(ErrorKind::usage, 0,
                f.shell.empty() ? "kern completion: name a shell: bash, zsh or fish"
                                : "kern completion: no completion for \"" + f.shell + "\" (bash, zsh or fish)");
  // Every verb, built into an app of its own as `kern help` builds them, walked for the script.
  CLI::App all{"kern", "kern"};
  VerbContext unused;
  for (const auto& v : verbs_for({})) v.fn(all, unused);
  all.set_version_flag("--version", std::string());
  auto model = completion_model(all);
  std::string script = f.shell == "bash" ? completion_script_bash(model)
                       : f.shell == "zsh" ? completion_script_zsh(model)
                                          : completion_script_fish(model);
  KERN_TRY(sys::write_all(STDOUT_FILENO, script, "stdout"));
  return 0;
}

void register_completion(CLI::App& app, VerbContext& ctx) {
  static CompletionFlags f;
  CLI::App* c = app.add_subcommand("completion", "print the shell completion script for bash, zsh or fish");
  c->add_option("shell", f.shell, "bash, zsh or fish");
  c->add_option("--list", f.list, "images, boxes, kernels or volumes: the names the scripts offer, one a line");
  c->callback([&ctx] { ctx.action = [] { return run_completion(f); }; });
}

const VerbRegistration completion_reg{96, "completion", &register_completion};

}  // namespace version_verb
}  // namespace

std::vector<CompletionVerb> completion_model(const CLI::App& root) {
  std::vector<CompletionVerb> out;
  version_verb::walk(root, "", out);
  CompletionVerb help;
  help.path = "help";
  help.help = "show the help of kern or of a verb";
  help.positional = positional_kind("help");
  out.push_back(std::move(help));
  return out;
}

std::string version_text() {
  std::string s = std::string("kern ") + KERN_VERSION + "\n";
  s += std::string("commit: ") + kGitCommit + "\n";
  s += std::string("build: ") + kBuildType + "\n";
  s += std::string("libseccomp: ") + seccomp_programs::libseccomp_version + " (compiled the seccomp programs)\n";
  s += "features:";
  for (const auto& f : version_verb::features()) s += " " + f;
  return s + "\n";
}

std::string version_json() {
  nlohmann::json j;
  j["version"] = KERN_VERSION;
  j["commit"] = kGitCommit;
  j["build_type"] = kBuildType;
  j["libseccomp"] = std::string(seccomp_programs::libseccomp_version);
  j["features"] = version_verb::features();
  return j.dump() + "\n";
}

}  // namespace kern::cli
