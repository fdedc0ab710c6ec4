// Finds where the command starts among kern box's words; see box_argv.h. Pure: the flag table
// comes in as a function, so the unit tests drive it without CLI11.
#include "cli/box_argv.h"

#include "profiles/profile_token.h"
#include "runtime/registry.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

bool flag_like(const std::string& w) { return w.size() > 1 && w[0] == '-'; }

// Skips the values of one flag occurrence whose own word already held `attached` values
// (1 for "--x=v" or "-xv", else 0); returns the index of the next unread word.
size_t skip_values(const std::vector<std::string>& words, size_t next, const FlagArity& a, int attached) {
  int collected = attached;
  while (collected < a.min && next < words.size()) ++next, ++collected;
  while ((collected < a.max || a.extra) && next < words.size() && !flag_like(words[next])) ++next, ++collected;
  return next;
}

}  // namespace

size_t box_command_start(const std::vector<std::string>& words, const ArityOf& arity) {
  bool seen_flag = false;
  size_t i = 0;
  while (i < words.size()) {
    const std::string& w = words[i];
    if (!flag_like(w)) {
      if (seen_flag && !profiles::looks_like_profile_token(w)) return i;
      ++i;
      continue;
    }
    seen_flag = true;
    if (w.rfind("--", 0) == 0) {
      size_t eq = w.find('=');
      auto a = arity(w.substr(0, eq));
      if (!a || a->max == 0) {
        ++i;
        continue;
      }
      i = skip_values(words, i + 1, *a, eq == std::string::npos ? 0 : 1);
      continue;
    }
    // A cluster of short flags ("-it"); the first one that takes a value takes the rest of the
    // word, or the following words.
    size_t next = i + 1;
    for (size_t j = 1; j < w.size(); ++j) {
      auto a = arity(std::string("-") + w[j]);
      if (!a) break;
      if (a->max == 0) continue;
      next = skip_values(words, i + 1, *a, j + 1 < w.size() ? 1 : 0);
      break;
    }
    i = next;
  }
  return words.size();
}

std::optional<Error> misplaced_before_separator(const std::vector<std::string>& words, size_t at,
                                                const ArityOf& arity, const std::vector<std::string>& command) {
  bool kern_flag = false;
  for (size_t i = at + 1; i < words.size() && !kern_flag; ++i) {
    const std::string& w = words[i];
    // "--flag=v" by its name, a cluster "-it" by its first letter.
    kern_flag = flag_like(w) && arity(w.rfind("--", 0) == 0 ? w.substr(0, w.find('=')) : w.substr(0, 2)).has_value();
  }
  if (!kern_flag) return std::nullopt;
  const std::string& word = words[at];
  bool named = !words.empty() && !flag_like(words[0]) && !profiles::looks_like_profile_token(words[0]);
  // The flag the word follows (it may follow that flag's own values).
  size_t f = at;
  while (f > 0 && !flag_like(words[f - 1])) --f;
  std::string flag = f > 0 ? words[f - 1] : std::string();
  Error e(ErrorKind::usage, 0,
          log::quoted(word) + " after " + log::quoted(flag) + " is not the command: the command is what follows \"--\"");
  if (named || !valid_box_name(word))
    return e.with_hint(log::quoted(flag) + " does not take it as a value; kern box --help lists the flags and their values");
  std::string line = "kern box " + word;
  for (size_t i = 0; i < words.size(); ++i)
    if (i != at) line += " " + words[i];
  line += " --";
  for (size_t i = 0; i < command.size() && i < 3; ++i) line += " " + command[i];
  if (command.size() > 3) line += " ...";
  return e.with_hint("the box name goes right after box (or give --name " + word + "): " + log::sanitize(line));
}

ArityOf cli11_arity(const CLI::App& cmd) {
  return [&cmd](const std::string& flag) -> std::optional<FlagArity> {
    const CLI::Option* op = cmd.get_option_no_throw(flag);
    if (op == nullptr || op->get_positional()) return std::nullopt;
    // The same bounds CLI11's App::_parse_arg works out for an occurrence of `op`.
    FlagArity a;
    a.min = std::min(op->get_type_size_min(), op->get_items_expected_min());
    a.max = op->get_items_expected_max();
    if (a.max >= CLI::detail::expected_max_vector_size / 16 && !op->get_allow_extra_args())
      a.max = op->get_type_size_max();
    a.extra = op->get_allow_extra_args();
    return a;
  };
}

}  // namespace kern::cli
