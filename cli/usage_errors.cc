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

// Words a docker or podman user types that kern does not have under that name: what kern has
// instead, or that it is not there yet. A did-you-mean would only suggest an unrelated verb
// ("top": stop, "push": ps).
struct Instead {
  const char* word;
  const char* hint;
};
constexpr Instead kVerbsInstead[] = {
    {"volume", "kern has no named volumes yet: bind a host directory with -v /abs/path:/dst or -v ./dir:/dst"},
    {"network", "kern has no networks to manage: a box's network is chosen with --net none, host or private"},
    {"container", "kern's container commands are its verbs: kern ps, kern stop, kern rm, kern logs, kern exec"},
    {"start", "kern keeps no stopped boxes to start again: kern box -d NAME ... starts a new one"},
    {"restart", "kern keeps no stopped boxes to start again: kern box -d NAME ... starts a new one"},
    {"create", "kern creates and starts a box in one step: kern box -d NAME ..."},
    {"info", "kern doctor says what this host can do, kern system df what kern stores"},
    {"cp", "kern cannot copy files in or out of a box yet: bind a host directory with -v"},
};
constexpr Instead kImageInstead[] = {
    {"ls", "kern images lists the images"},     {"list", "kern images lists the images"},
    {"rm", "kern rmi removes images"},          {"remove", "kern rmi removes images"},
    {"pull", "kern pull fetches an image"},     {"tag", "kern tag names an image"},
    {"save", "kern save writes images as a docker-archive"}, {"load", "kern load imports an archive"},
    {"push", "kern push sends an image to its registry"},
    {"build", "kern build makes an image from a Dockerfile"},
    {"history", "kern history shows the steps that made an image"},
    {"inspect", "kern images --json describes the images"},
};
constexpr Instead kSystemInstead[] = {
    {"prune", "kern gc removes unused images, layers and leftovers"},
    {"info", "kern doctor says what this host can do"},
};

// `kern run --rm -it busybox sh` (docker's words) as `kern box -it --image busybox -- sh`: the
// flags before the image (less --rm, which every box does), the image, and the command.
std::string docker_run_as_box(const std::vector<std::string>& head) {
  std::string flags, image, command;
  for (size_t i = 1; i < head.size(); ++i) {
    const std::string& w = head[i];
    if (!image.empty()) command += " " + w;
    else if (!w.empty() && w[0] == '-') flags += w == "--rm" ? "" : " " + w;
    else image = w;
  }
  std::string line = "kern box" + flags + " --image " + (image.empty() ? std::string("IMAGE") : image);
  if (!command.empty()) line += " --" + command;
  return log::sanitize(line.size() > 200 ? line.substr(0, 200) + "..." : line);
}

template <size_t N>
const char* instead_of(const Instead (&table)[N], std::string_view word) {
  for (const Instead& i : table)
    if (word == i.word) return i.hint;
  return nullptr;
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
  if (const char* hint = instead_of(kVerbsInstead, word)) return e.with_hint(hint);
  std::string_view best = profiles::closest(word, names, near_enough(word));
  return e.with_hint(best.empty() ? std::string("kern help lists the commands")
                                  : "did you mean \"" + std::string(best) + "\"?");
}

Error missing_subcommand(const CLI::App& app, const std::vector<std::string>& head) {
  if (!head.empty() && (head.front() == "-v" || head.front() == "-V"))
    return Error(ErrorKind::usage, 0, "unknown flag " + log::quoted(head.front()) + " for kern")
        .with_hint("kern --version (or kern version) prints the version");
  std::string path;
  const CLI::App* cmd = selected(app, head, path);
  if (path == "kern") return Error(ErrorKind::usage, 0, "no command given").with_hint("kern help lists the commands");
  std::vector<std::string> names;
  for (const CLI::App* c : cmd->get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    names.push_back(c->get_name());
  std::string has;
  for (const auto& n : names) has += (has.empty() ? "" : ", ") + n;
  size_t depth = 0;
  for (size_t at = path.find(' '); at != std::string::npos; at = path.find(' ', at + 1)) ++depth;
  std::string word = depth < head.size() ? head[depth] : std::string();
  if (word.empty() || word[0] == '-')
    return Error(ErrorKind::usage, 0, path + " needs a command: " + has).with_hint(path + " --help describes them");
  Error e(ErrorKind::usage, 0, "unknown command " + log::quoted(path.substr(5) + " " + word));
  const char* hint = path == "kern image" ? instead_of(kImageInstead, word)
                     : path == "kern system" ? instead_of(kSystemInstead, word) : nullptr;
  if (hint) return e.with_hint(hint);
  std::vector<std::string_view> known(names.begin(), names.end());
  std::string_view best = profiles::closest(word, known, near_enough(word));
  return e.with_hint(best.empty() ? path + " has: " + has : "did you mean \"" + path + " " + std::string(best) + "\"?");
}

std::optional<Error> unknown_subcommand(const CLI::App& app, const std::vector<std::string>& head) {
  // The commands' words without their options (`kern oci --root DIR foo -h`: oci, foo).
  const CLI::App* at = &app;
  std::vector<std::string> words;
  for (size_t i = 0; i < head.size(); ++i) {
    const std::string& w = head[i];
    if (w.empty()) return std::nullopt;
    if (w[0] == '-') {
      const CLI::Option* opt = w.find('=') == std::string::npos ? at->get_option_no_throw(w) : nullptr;
      if (opt != nullptr && opt->get_items_expected_min() > 0) ++i;  // its value
      continue;
    }
    words.push_back(w);
    auto next = at->get_subcommands([&w](const CLI::App* c) { return c->get_name() == w; });
    if (!next.empty()) {
      at = next.front();
      continue;
    }
    if (at->get_require_subcommand_min() == 0 ||
        at->get_subcommands([](const CLI::App* c) { return !c->get_name().empty(); }).empty())
      return std::nullopt;
    return missing_subcommand(app, words);
  }
  return std::nullopt;
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
  // `kern run --rm -it busybox sh`: docker's run is kern box here; kern run has no sandbox.
  if (path == "kern run" && best.empty())
    return e.with_hint("kern run runs a host command under caps, with no sandbox; docker's run is kern box here: " +
                       docker_run_as_box(head) + " (a box is always removed when it ends)");
  return e.with_hint(best.empty() ? path + " --help lists its flags" : "did you mean \"" + std::string(best) + "\"?");
}

Error empty_value(const std::string& flag, const std::string& expected, const std::string& otherwise) {
  return Error(ErrorKind::usage, 0, flag + ": the value is empty")
      .with_hint("give " + expected + ", or leave " + flag.substr(0, flag.find('/')) + " out for " + otherwise);
}

std::string usage_hint(const CLI::App& app, const std::vector<std::string>& head) {
  std::string path;
  selected(app, head, path);
  if (path == "kern") return "kern help lists the commands";
  return path + " --help lists its flags";
}

}  // namespace kern::cli
