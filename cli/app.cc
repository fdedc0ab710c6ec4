// Builds the CLI11 app from the registered verbs, runs the chosen one, prints an error once and
// returns the exit code from exit_codes.h.
#include "cli/app.h"

#include <algorithm>

#include "cli/box_argv.h"
#include "cli/compose_command.h"
#include "cli/usage_errors.h"
#include "cli/verb.h"
#include "cli/version_info.h"
#include "runtime/sys/log.h"

namespace kern::cli {

std::vector<RegisteredVerb>& registered_verbs() {
  static std::vector<RegisteredVerb> verbs;
  return verbs;
}

VerbRegistration::VerbRegistration(int order, const char* name, RegisterFn fn) {
  registered_verbs().push_back(RegisteredVerb{order, name, fn});
}

std::vector<RegisteredVerb> verbs_for(const std::vector<std::string>& head) {
  const auto& all = registered_verbs();
  if (!head.empty()) {
    for (const auto& v : all)
      if (head.front() == v.name) return {v};
  }
  std::vector<RegisteredVerb> verbs = all;
  std::stable_sort(verbs.begin(), verbs.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  return verbs;
}

namespace {
RawArgs g_raw;

// Which table applies when parsing fails before any verb set one: `kern box` (and `kern kernel
// start`, which launches a box, and `kern exec`) promise 125 for a bad flag.
ExitTable table_for_argv(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    if (a == "box" || a == "run" || a == "exec") return ExitTable::box;
    if (a == "kernel" && i + 1 < argc && std::string(argv[i + 1]) == "start") return ExitTable::box;
    return ExitTable::verb;
  }
  return ExitTable::verb;
}

// The exit code of a command line that did not parse. runc's is 1 for every one (an unknown
// flag, a missing id), and engines and runc's suite read it so: `kern oci` and kern-oci follow.
int parse_failure_code(const Error& err, const std::vector<std::string>& head, int argc, char** argv) {
  if (!head.empty() && head.front() == "oci") return kExitVerbFailed;
  return exit_code_for(err, table_for_argv(argc, argv));
}

std::vector<std::string> g_trailing;
bool g_has_separator = false;
}  // namespace

const RawArgs& raw_args() { return g_raw; }
const std::vector<std::string>& trailing_command() { return g_trailing; }
bool has_trailing_separator() { return g_has_separator; }

namespace {
// Splits argv at the first "--" that follows the verb: what comes after is a command, never kern's.
std::vector<std::string> split_at_separator(int argc, char** argv) {
  std::vector<std::string> head;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--" && !g_has_separator) {
      g_has_separator = true;
      continue;
    }
    if (g_has_separator) g_trailing.push_back(a);
    else head.push_back(a);
  }
  return head;
}
// `kern box --image busybox date`: the command starts at the first bare word after a flag
// (box_argv.h). It and everything after it, a "--" included, become the trailing command. With
// a "--" given, such a word is misplaced instead, and the error says so.
std::optional<Error> move_box_command(const CLI::App& app, std::vector<std::string>& head) {
  if (head.empty() || head.front() != "box") return std::nullopt;
  auto found = app.get_subcommands([](const CLI::App* c) { return c->get_name() == "box"; });
  if (found.empty()) return std::nullopt;
  const CLI::App* box = found.front();
  std::vector<std::string> words(head.begin() + 1, head.end());
  size_t at = box_command_start(words, cli11_arity(*box));
  if (at == words.size()) return std::nullopt;
  if (g_has_separator) {
    if (auto e = misplaced_before_separator(words, at, cli11_arity(*box), g_trailing)) return e;
  }
  std::vector<std::string> cmd(words.begin() + static_cast<std::ptrdiff_t>(at), words.end());
  if (g_has_separator) cmd.push_back("--");
  cmd.insert(cmd.end(), g_trailing.begin(), g_trailing.end());
  g_trailing = std::move(cmd);
  g_has_separator = true;
  head.resize(1 + at);
  return std::nullopt;
}
}  // namespace

namespace {
int run_app(int argc, char** argv, bool all_flags) {
  g_raw = RawArgs{argc, argv};
  g_trailing.clear();
  g_has_separator = false;
  CLI::App app{"kern: rootless, daemonless boxes for untrusted code", "kern"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    std::string text = version_text();
    return text.substr(0, text.size() - 1);  // CLI11 adds the newline
  });
  VerbContext ctx;
  ctx.all_flags = all_flags;
  std::vector<std::string> head = split_at_separator(argc, argv);
  // Invoked as kern-oci (a link to kern, how container engines name a runtime): `kern oci ...`.
  std::string_view self = argc > 0 ? argv[0] : "";
  if (self.substr(self.rfind('/') + 1) == "kern-oci") head.insert(head.begin(), "oci");
  if (head.empty()) {
    log::error(Error(ErrorKind::usage, 0, "no command given").with_hint("kern help lists the commands"));
    return kExitUsage;
  }
  // `kern help [VERB...]` is `kern [VERB...] --help`.
  if (head.front() == "help") {
    head.erase(head.begin());
    head.push_back("--help");
  }
  std::vector<std::string> names;
  for (const auto& v : registered_verbs()) names.emplace_back(v.name);
  if (auto unknown = unknown_verb(head, names)) {
    log::error(*unknown);
    return exit_code_for(*unknown, ExitTable::verb);
  }
  for (const auto& v : verbs_for(head)) v.fn(app, ctx);
  move_compose_file_word(head);
  if (auto misplaced = move_box_command(app, head)) {
    log::error(*misplaced);
    return exit_code_for(*misplaced, ExitTable::box);
  }

  try {
    std::vector<std::string> reversed(head.rbegin(), head.rend());  // CLI11 takes a reversed vector
    app.parse(reversed);
  } catch (const CLI::ExtrasError&) {
    // Built with only the flags the words name (flag_filter.h): the same words fail with every
    // flag too, and that parse's error is the full app's (its did-you-mean sees every flag).
    if (ctx.flags_filtered) return run_app(argc, argv, true);
    Error err = unexpected_words(app, head, app.remaining(true));
    log::error(err);
    return parse_failure_code(err, head, argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version: CLI11 prints them
    if (auto unknown = unknown_subcommand(app, head)) {
      log::error(*unknown);
      return parse_failure_code(*unknown, head, argc, argv);
    }
    standard_streams();
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (ctx.flags_filtered) return run_app(argc, argv, true);
    bool no_subcommand = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
                         std::string_view(e.what()).find("ubcommand") != std::string_view::npos;
    Error err = no_subcommand ? missing_subcommand(app, head)
                              : Error(ErrorKind::usage, 0, e.what()).with_hint(usage_hint(app, head));
    log::error(err);
    return parse_failure_code(err, head, argc, argv);
  }
  if (!ctx.action) {
    log::error("no verb given");
    return kExitUsage;
  }
  Result<int> r = ctx.action();
  if (!r) {
    Error err = r.error();
    if (err.kind() == ErrorKind::usage && err.hint().empty()) err.with_hint(usage_hint(app, head));
    log::error(err);
    return exit_code_for(err, ctx.table);
  }
  return *r;
}
}  // namespace

int run(int argc, char** argv) { return run_app(argc, argv, false); }

}  // namespace kern::cli
