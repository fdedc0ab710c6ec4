// `kern completion bash|zsh|fish`: prints the completion script for that shell, made from
// kern's own command line (cli/completions/): the walk of the CLI11 app into the completion
// model lives here, the one completion file that sees CLI11. `kern completion --list
// images|boxes|kernels`: the names those scripts offer, one a line (what they run on TAB).
#include <unistd.h>

#include <set>

#include "cli/completions/completion_scripts.h"
#include "cli/verb.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {

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

// The names a user types for the images in the store: Docker Hub's official images without
// "docker.io/library/", other Docker Hub images without "docker.io/", the rest as stored.
std::string typed_name(const std::string& ref) {
  for (std::string_view prefix : {"docker.io/library/", "docker.io/"})
    if (ref.rfind(prefix, 0) == 0 && ref.find('/', prefix.size()) == std::string::npos) return ref.substr(prefix.size());
  return ref.rfind("docker.io/", 0) == 0 ? ref.substr(10) : ref;
}

// A name a shell would split or misread is left out rather than offered broken.
bool plain_word(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= ' ' || c == 0x7f || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') return false;
  return true;
}

Result<std::set<std::string>> list_names(const std::string& what) {
  std::set<std::string> names;
  if (what == "images") {
    auto store = oci::Store::open(false);
    if (!store) return names;  // no store yet: no names
    KERN_TRY_ASSIGN(oci::Store::Listing refs, store->list_refs());
    for (const auto& r : refs.records) names.insert(typed_name(r.ref));
  } else if (what == "boxes" || what == "kernels") {
    auto rt = paths::runtime_dir();
    if (!rt) return names;
    for (const auto& b : list_boxes_all(*rt, false))
      if ((b.kind == "kernel") == (what == "kernels")) names.insert(b.name);
  } else {
    return fail(ErrorKind::usage, 0, "kern completion --list: \"" + what + "\" is not images, boxes or kernels");
  }
  return names;
}

Result<int> run_completion(const CompletionFlags& f) {
  if (!f.list.empty()) {
    if (!f.shell.empty()) return fail(ErrorKind::usage, 0, "kern completion: give a shell or --list, not both");
    KERN_TRY_ASSIGN(std::set<std::string> names, list_names(f.list));
    std::string out;
    for (const auto& n : names)
      if (plain_word(n)) out += n + "\n";
    KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
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
  c->add_option("--list", f.list, "images, boxes or kernels: the names the scripts offer, one a line");
  c->callback([&ctx] { ctx.action = [] { return run_completion(f); }; });
}

const VerbRegistration reg{96, "completion", &register_completion};

}  // namespace

std::vector<CompletionVerb> completion_model(const CLI::App& root) {
  std::vector<CompletionVerb> out;
  walk(root, "", out);
  CompletionVerb help;
  help.path = "help";
  help.help = "show the help of kern or of a verb";
  help.positional = positional_kind("help");
  out.push_back(std::move(help));
  return out;
}
}  // namespace kern::cli
