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

// After CLI11's ExtrasError: `extras` are the words nothing took. Names the first of them, and
// the nearest flag of the (sub)command that `head` selects in `app`.
Error unexpected_words(const CLI::App& app, const std::vector<std::string>& head,
                       const std::vector<std::string>& extras);

// The hint under a usage error that has none of its own: the --help of the verb `head` names.
std::string usage_hint(const CLI::App& app, const std::vector<std::string>& head);

}  // namespace kern::cli
