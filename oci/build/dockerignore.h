// .dockerignore rules for the build context of `kern build`. Pure (no I/O); any process.
//
// The file, as Docker reads it: one pattern a line; a line starting with `#` in its first column
// is a comment; blank lines are skipped; each pattern is trimmed, cleaned like Go's filepath.Clean
// ("./a//b/" is "a/b", ".." resolved), and a leading "/" dropped; "!" makes an exception (a bare
// "!" is an error). Globs are Go's filepath.Match syntax as Docker's matcher reads them: `*` and
// `?` stop at "/", `[a-z]`, `[^a]` (a class may match "/"), `\` escapes the next char; `**`
// matches any number of directories (none included), a trailing `**` anything.
//
// A pattern matches a path when it matches the path or one of its parent directories (`foo`
// ignores foo/bar), and the last rule that matches decides (`*.md` then `!README.md` keeps
// README.md).
#pragma once

#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::oci::build {

class IgnoreRules {
 public:
  struct Rule {
    std::string pattern;  // cleaned, without the "!"
    bool exception = false;
  };

  // Errors (usage): a bare "!", a pattern that is not a valid glob (an unterminated "[", a
  // range that runs backwards, a trailing "\"), naming the line.
  static Result<IgnoreRules> parse(std::string_view text);

  // rel: a path relative to the context root, "/"-separated, no leading "./" (a trailing "/" is
  // ignored). The last matching rule wins. The root itself ("" or ".") is never ignored.
  bool ignored(std::string_view rel) const;
  // Whether some exception could match a path below the directory `dir`: a walker that finds
  // `dir` ignored must still descend into it when this is true. Conservative: true whenever it
  // cannot rule an exception out.
  bool may_contain_exception(std::string_view dir) const;
  bool empty() const { return rules_.empty(); }
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  // A pattern compiled to a sequence of matchers.
  struct Token {
    enum class Kind { literal, star, question, cls, any_dirs, any_rest } kind = Kind::literal;
    char byte = 0;                                 // literal
    bool negated = false;                          // cls
    std::vector<std::pair<char32_t, char32_t>> ranges;  // cls: inclusive code point ranges
  };
  using Tokens = std::vector<Token>;
  static Result<Tokens> compile(std::string_view pattern);
  static bool matches(const Tokens& tokens, std::string_view path);

  std::vector<Rule> rules_;
  std::vector<Tokens> compiled_;  // parallel to rules_
};

}  // namespace kern::oci::build
