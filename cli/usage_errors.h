// The usage errors kern words itself rather than leaving to CLI11: an unknown verb and a word
// no flag or verb took, each with a "did you mean" hint when a known spelling is close.
#pragma once

#include "cli/cli11.h"

#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

// `known`: the verb names. An Error when the first word of `head` (argv after "kern", before
// "--") is a bare word naming no verb; nullopt otherwise.
std::optional<Error> unknown_verb(const std::vector<std::string>& head, const std::vector<std::string>& known);

// CLI11's "A subcommand is required" in kern's words: `kern -v` (docker's --version), a verb
// that has commands given none or an unknown one (`kern image ls`), each with what kern has
// instead where it has something.
Error missing_subcommand(const CLI::App& app, const std::vector<std::string>& head);

// Before CLI11's --help answer: `kern oci foo -h` names a command that does not exist (CLI11
// would print the help of `kern oci` and exit 0; runc and docker refuse it). nullopt when the
// word after the deepest command `head` selects is a flag, or that command needs no command.
std::optional<Error> unknown_subcommand(const CLI::App& app, const std::vector<std::string>& head);

// After CLI11's ExtrasError: `extras` are the words nothing took. Names the first of them, and
// the nearest flag of the (sub)command that `head` selects in `app`.
Error unexpected_words(const CLI::App& app, const std::vector<std::string>& head,
                       const std::vector<std::string>& extras);

// A flag given an empty value (`-m ""`, often an unset shell variable): refused rather than
// taken as absent, as docker refuses it. `expected` says what a value looks like, `otherwise`
// what leaving the flag out gives.
Error empty_value(const std::string& flag, const std::string& expected, const std::string& otherwise);

// The hint under a usage error that has none of its own: the --help of the verb `head` names.
std::string usage_hint(const CLI::App& app, const std::vector<std::string>& head);

}  // namespace kern::cli
