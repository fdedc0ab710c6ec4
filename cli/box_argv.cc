// Finds where the command starts among kern box's words; see box_argv.h. Pure: the flag table
// comes in as a function, so the unit tests drive it without CLI11.
#include "cli/box_argv.h"

#include "profiles/profile_token.h"

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
