// The facts shell completion needs, read off kern's CLI11 app (so a completion script cannot
// name a flag kern does not have, nor miss one it has): every verb path ("box", "kernel start"),
// its flags (which take a value, and what kind of value), its sub-verbs and what its bare words
// are. The renderers (completion_{bash,zsh,fish}.cc) turn this into a script. Pure.
#pragma once

#include <string>
#include <vector>

// Only cli/version_command.cc, which walks the app, sees CLI11: every file that includes
// CLI.hpp pays CLI11's namespace-scope validators at every kern start.
namespace CLI {
class App;
}

namespace kern::cli {

// What a flag's value or a verb's bare word completes to. Lists are words the script offers
// as they are; the others are looked up when the user presses TAB:
//   images   `kern completion --list images` (names in the local store)
//   boxes    `kern completion --list boxes` (live and exited detached boxes)
//   kernels  `kern completion --list kernels` (live warm kernels)
//   volumes  `kern completion --list volumes` (named volumes)
//   verbs    kern's verbs (kern help VERB)
//   files, dirs   the shell's own file name completion
//   command  kern box's bare words: nothing before a flag (the name, profile tokens); after
//            one, the box's command: command names, then the shell's default completion
//   none     nothing (a name the user makes up, a number)
struct CompletionKind {
  std::string kind = "none";       // one of the words above, or "words"
  std::vector<std::string> words;  // kind "words": the values offered
};

struct CompletionFlag {
  std::vector<std::string> names;  // "-e", "--env": short first, then long
  enum class Value { none, required, optional } value = Value::none;
  CompletionKind kind;             // what the value completes to
  std::string help;
};

struct CompletionVerb {
  std::string path;                  // "" for kern itself, "box", "kernel start"
  std::string help;
  std::vector<std::string> subverbs; // the words that lead to a deeper path
  std::vector<CompletionFlag> flags;
  CompletionKind positional;         // what its bare words complete to
};

// Every verb path of `root` (kern's app with every verb built), kern itself first, in the
// order CLI11 holds them, then app.cc's own `help` (cli/version_command.cc).
std::vector<CompletionVerb> completion_model(const CLI::App& root);

// What a value of the flag with these names completes to (files when the table has none of
// them), and what a verb path's bare words complete to (none when the table has no entry).
CompletionKind flag_value_kind(const std::vector<std::string>& names);
CompletionKind positional_kind(const std::string& path);

// The names the two lookup tables of completion_model.cc mention, for the test that every one
// of them is a real flag or verb path (a renamed flag must not leave a dead entry behind).
std::vector<std::string> completion_table_flags();
std::vector<std::string> completion_table_paths();

// A verb's flag names: all of them, those that take a value, those that may take one.
struct FlagNames {
  std::vector<std::string> all, required, optional;
};
FlagNames flag_names(const CompletionVerb& v);

// How a script language writes a switch on a string: bash's and zsh's `case`, fish's `switch`.
// The function around it is the renderer's.
struct SwitchSyntax {
  std::string (*quote)(const std::string&);
  const char* head;      // before the patterns of a case
  const char* sep;       // between patterns
  const char* open;      // after the patterns
  const char* indent;    // of a case's lines
  const char* close;     // after a case's lines
  const char* fallback;  // the pattern that matches anything
  const char* print;     // the command that prints a word
};
struct SwitchCase {
  std::vector<std::string> patterns;  // quoted by the syntax
  std::vector<std::string> lines;     // as they are
};
std::string render_switch(const SwitchSyntax& sx, const std::vector<SwitchCase>& cases,
                          const std::vector<std::string>& fallback_lines);
// The cases of a script's "what is this flag's value" switch: for every flag of every verb that
// takes a value, its "PATH|FLAG" keys (one per name) and a line printing its kind.
std::vector<SwitchCase> value_cases(const std::vector<CompletionVerb>& model, const SwitchSyntax& sx);

// The help of sub-verb `sub` of verb path `path`.
std::string subverb_help(const std::vector<CompletionVerb>& model, const std::string& path, const std::string& sub);

// Single-quoted for a POSIX shell (bash, zsh; fish reads the same quoting for these words):
// 'it'\''s'.
std::string shell_quote(const std::string& s);
// The words joined by single spaces.
std::string join_words(const std::vector<std::string>& v);
// A kind as the scripts carry it: "images", ..., or "words:A B C".
std::string kind_word(const CompletionKind& k);

}  // namespace kern::cli
