// The pure parts of `kern exec`'s command line (cli/exec_command.cc), for unit tests.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/env_file.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct ExecWords {
  std::string name;
  std::vector<std::string> command;
};

// The words after kern exec's flags: NAME CMD..., or NAME alone when the command followed "--".
Result<ExecWords> split_exec_words(const std::vector<std::string>& words, bool has_separator,
                                   const std::vector<std::string>& after_separator);

// A user name's uid and gid in the box's /etc/passwd; nullopt when it has none.
using PasswdLookup = std::function<std::optional<std::pair<unsigned long, unsigned long>>(const std::string&)>;
// -u UID[:GID] or NAME[:GID], read as kern box reads it (parse_user_words); a NAME through
// `lookup`. The gid defaults to the uid, or to the name's own group. Without `uid_range` (a box
// that maps only its id 0) any other id is refused as kern box refuses it.
Result<std::pair<uid_t, gid_t>> exec_user(const std::string& text, const PasswdLookup& lookup, bool uid_range);

// The exec'd process's environment: the box's (image Env, the box's --env-file and -e), then
// TERM=xterm for -t, then exec's own --env-file and -e (later wins), as kern box merges its own
// (merge_env_flags). Of the caller's environment only what a bare K names.
Result<std::vector<std::string>> exec_env(const std::vector<std::string>& box_env, bool tty,
                                          const std::vector<std::string>& env_files,
                                          const std::vector<std::string>& add, const CallerEnv& caller);

}  // namespace kern::cli
