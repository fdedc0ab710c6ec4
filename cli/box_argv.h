// Where the command of `kern box` starts when no "--" marks it (kern-box(1), as in
// `docker run`): bare words before any flag are the box name and profile tokens; after a flag, a
// profile token (vcpu:/vdisk:/vgpio:) is still kern's, and any other bare word starts the command,
// which then owns every word after it, flag-like or not.
#pragma once

#include "cli/cli11.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

// How many words a flag takes, computed as CLI11 computes it when it parses that flag: `min`
// words are taken whatever they look like, up to `max` more (unbounded with `extra`) while they
// do not look like a flag.
struct FlagArity {
  int min = 0;
  int max = 0;
  bool extra = false;
};
// nullopt: no such flag (CLI11 will refuse it; the scan goes on as if it took no value).
using ArityOf = std::function<std::optional<FlagArity>(const std::string& flag)>;

// `words`: what follows the verb, before the first "--". Returns the index of the first word of
// the command, or words.size() when every word is kern's.
size_t box_command_start(const std::vector<std::string>& words, const ArityOf& arity);

// A bare word the scan above takes for the command (words[at]) when a "--" follows: if one of
// kern box's own flags comes after it, the user was still writing kern's words and the command
// is what follows "--", so the word is misplaced: the box name written after a flag
// (`kern box -d web --rootfs R -- CMD`), or a value given to a flag that takes none. The error
// names the word and, when it can be the box name, where that goes; `command` (after "--") is
// only shown in the corrected line. nullopt when no flag of kern's follows: the word starts a
// command that has a "--" of its own (`kern box --image busybox grep -- -v x`).
std::optional<Error> misplaced_before_separator(const std::vector<std::string>& words, size_t at,
                                                const ArityOf& arity, const std::vector<std::string>& command);

// The arity of `cmd`'s flags as CLI11 will parse them.
ArityOf cli11_arity(const CLI::App& cmd);

}  // namespace kern::cli
