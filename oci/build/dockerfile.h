// The Dockerfile parser of `kern build`: text in, instructions out. Pure (no I/O); any process.
//
// It follows the Dockerfile reference as Docker documents it:
//   - parser directives (`# escape=\`` or `# syntax=...`, case-insensitive, `# check=...` too) are
//     read only at the very top: the first line that is not a directive (a comment, a blank
//     line, an instruction, an unknown directive) ends them;
//   - a line whose first non-blank character is `#` is a comment, also between continuation
//     lines; blank lines inside a continuation are skipped;
//   - the escape character (default `\`) at the end of a line, trailing blanks allowed, joins
//     the next line: the escape and the newline are removed, nothing else;
//   - keywords are case-insensitive; leading `--name[=value]` words are flags;
//   - RUN, COPY and ADD (also under ONBUILD) in shell form may name heredocs (`<<EOF`,
//     `<<-EOF`, `<<"EOF"`, several on one line): their bodies follow the instruction's last
//     line, verbatim (no comment removal, no continuation);
//   - CRLF line endings and a UTF-8 byte order mark are accepted; bytes that are not UTF-8
//     pass through untouched.
// Variables are NOT expanded here: the builder calls expand / split_words / parse_key_values
// with the variables of the stage being built.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::oci::build {

struct Heredoc {
  std::string name;         // the delimiter word ("EOF"), also the file name for COPY <<name
  std::string body;         // the lines between, each ending in "\n"
  bool expand = true;       // false when the delimiter was quoted (<<"EOF" or <<'EOF'): no variable expansion
  bool strip_tabs = false;  // <<-EOF: leading tabs removed from each body line (already applied to body)
};

struct Flag {
  std::string name;  // without "--"
  std::string value;  // quotes removed
  bool has_value = false;
};

struct Instruction {
  // Upper-cased: FROM, RUN, COPY, ADD, ENV, ARG, WORKDIR, USER, CMD, ENTRYPOINT, EXPOSE, VOLUME,
  // LABEL, STOPSIGNAL, HEALTHCHECK, SHELL, ONBUILD, MAINTAINER.
  std::string keyword;
  std::vector<Flag> flags;  // leading --flags, in order
  bool json = false;        // exec form: args is the JSON array's strings
  // json: the array's strings.
  // RUN/CMD/ENTRYPOINT/SHELL shell form: one element, the command text (empty for a bare CMD).
  // WORKDIR/USER/STOPSIGNAL/MAINTAINER: one element, the whole text (a path may hold blanks).
  // ONBUILD: one element, the inner instruction (also in `text`; parse_instruction re-reads it).
  // HEALTHCHECK: {"NONE"}, or "CMD" followed by the command as RUN has it ({"CMD", text} in
  //   shell form; {"CMD", a, b...} with json = true in exec form).
  // Other keywords: the words as written, quotes and escapes kept, NOT expanded (expansion
  //   happens later with the build's variables).
  std::vector<std::string> args;
  std::string text;               // everything after keyword and flags, continuations joined
  std::vector<Heredoc> heredocs;  // in order of their <<markers in the line
  int line = 0;                   // 1-based line of the keyword
  std::string source;             // the instruction as written (joined), for history and messages
};

struct Dockerfile {
  char escape = '\\';
  std::string syntax;  // the # syntax= directive, if any (recorded, not acted upon)
  std::string check;   // the # check= directive, if any (recorded, not acted upon)
  std::vector<Instruction> instructions;
};

// Errors are ErrorKind::usage with "Dockerfile line N: ..." (an unknown instruction is named,
// with a hint for a likely typo; an unterminated heredoc; a bad or repeated directive). Text
// that does not parse as a JSON string array is shell form, not an error.
Result<Dockerfile> parse_dockerfile(std::string_view text);

// One joined instruction line (no heredoc bodies): what parse_dockerfile does per instruction.
// For ONBUILD triggers, which are stored as text and parsed again where they fire. `line` only
// numbers the messages.
Result<Instruction> parse_instruction(std::string_view joined, int line, char escape);

// Variable expansion of the Dockerfile reference: $VAR, ${VAR}, ${VAR:-word}, ${VAR:+word},
// ${VAR-word}, ${VAR+word}, ${VAR:?word}, ${VAR?word} (word itself expanded; the colon forms
// treat an empty value as unset). The escape char before $ gives a literal $ (an escaped escape
// char is kept as the two chars and escapes nothing); any other character, quotes included, is
// kept as it is (quotes are removed by split_words). lookup returns nullopt for an unset
// variable. Errors (usage): a ${ without its }, an unsupported modifier, a :? on an unset name.
using Lookup = std::function<std::optional<std::string>(std::string_view)>;
Result<std::string> expand(std::string_view word, const Lookup& lookup, char escape);

// Splits an argument text into words as Docker does for COPY/ADD/EXPOSE/VOLUME/USER/WORKDIR/...:
// whitespace separates, single and double quotes group and are removed, the escape char escapes
// the next char (inside double quotes only before ", $ and itself). With `expand_vars`, variables
// are expanded as the words are read: single quotes stop expansion, double quotes keep the
// expansion in one word, an unquoted expansion is split at its blanks. An unterminated quote is
// an error (usage).
Result<std::vector<std::string>> split_words(std::string_view text, const Lookup& lookup, char escape,
                                             bool expand_vars);

// One word as ENV/LABEL values are read: quotes removed, escapes applied, variables expanded
// (when lookup is set), blanks kept (no splitting).
Result<std::string> process_word(std::string_view text, const Lookup& lookup, char escape);

// ENV/LABEL/ARG: `k=v k2="v 2"` pairs, or (legacy_allowed) the one-pair form `ENV key value with
// spaces`; keys and values are read as process_word reads them (quotes removed, expanded with
// lookup). Without legacy_allowed (ARG), a word without `=` is a name without a value
// (has_value = false). A key that reads empty is an error (usage).
struct KeyValue {
  std::string key;
  std::string value;
  bool has_value = true;
};
Result<std::vector<KeyValue>> parse_key_values(std::string_view text, const Lookup& lookup, char escape,
                                               bool legacy_allowed);

}  // namespace kern::oci::build
