// Unknown verbs and unexpected words; see usage_errors.h.
#include "cli/usage_errors.h"

#include <algorithm>

#include "profiles/suggest.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

// The (sub)command `head` selects: "kernel start" descends twice.
const CLI::App* selected(const CLI::App& app, const std::vector<std::string>& head, std::string& path) {
  const CLI::App* at = &app;
  path = "kern";
  for (const auto& w : head) {
    auto next = at->get_subcommands([&w](const CLI::App* c) { return c->get_name() == w; });
    if (next.empty()) break;
    at = next.front();
    path += " " + w;
  }
  return at;
}

// Short words get a close suggestion only: "ab" is not a typo of "gc".
size_t near_enough(std::string_view w) {
  while (!w.empty() && w.front() == '-') w.remove_prefix(1);
  return std::min<size_t>(3, w.size() / 2 + 1);
}

}  // namespace

std::optional<Error> unknown_verb(const std::vector<std::string>& head, const std::vector<std::string>& known) {
  if (head.empty() || head.front().empty() || head.front()[0] == '-') return std::nullopt;
  const std::string& word = head.front();
  std::vector<std::string_view> names(known.begin(), known.end());
  for (auto n : names)
    if (n == word) return std::nullopt;
  Error e(ErrorKind::usage, 0, "unknown command " + log::quoted(word));
  std::string_view best = profiles::closest(word, names, near_enough(word));
  return e.with_hint(best.empty() ? std::string("kern help lists the commands")
                                  : "did you mean \"" + std::string(best) + "\"?");
}

Error unexpected_words(const CLI::App& app, const std::vector<std::string>& head,
                       const std::vector<std::string>& extras) {
  std::string path;
  const CLI::App* cmd = selected(app, head, path);
  std::string word = extras.empty() ? std::string() : extras.front();
  if (word.size() < 2 || word[0] != '-')
    return Error(ErrorKind::usage, 0, "unexpected argument " + log::quoted(word) + " for " + path)
        .with_hint(path + " --help shows its usage");
  std::string flag = word.substr(0, word.find('='));
  std::vector<std::string> spelled;
  // A verb's own flags include those of its option groups (nameless subcommands to CLI11).
  auto spell = [&](const CLI::App* c) {
    for (const CLI::Option* op : c->get_options()) {
      for (const auto& l : op->get_lnames()) spelled.push_back("--" + l);
      for (const auto& s : op->get_snames()) spelled.push_back("-" + s);
    }
  };
  for (const CLI::App* c = cmd; c != nullptr; c = c->get_parent()) {
    spell(c);
    for (const CLI::App* g : c->get_subcommands([](const CLI::App* s) { return s->get_name().empty(); })) spell(g);
  }
  std::vector<std::string_view> names(spelled.begin(), spelled.end());
  std::string_view best = profiles::closest(flag, names, near_enough(flag));
  Error e(ErrorKind::usage, 0, "unknown flag " + log::quoted(flag) + " for " + path);
  return e.with_hint(best.empty() ? path + " --help lists its flags" : "did you mean \"" + std::string(best) + "\"?");
}

std::string usage_hint(const CLI::App& app, const std::vector<std::string>& head) {
  std::string path;
  selected(app, head, path);
  if (path == "kern") return "kern help lists the commands";
  return path + " --help lists its flags";
}

}  // namespace kern::cli
