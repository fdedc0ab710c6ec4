// The pure parts of `kern exec`'s command line (cli/exec_command.cc), for unit tests.
#pragma once

#include <sys/types.h>

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

// The exec'd process's environment: the box's (image Env, the box's --env-file and -e), then
// TERM=xterm for -t, then exec's own --env-file and -e (later wins), as kern box merges its own
// (merge_env_flags). Of the caller's environment only what a bare K names.
Result<std::vector<std::string>> exec_env(const std::vector<std::string>& box_env, bool tty,
                                          const std::vector<std::string>& env_files,
                                          const std::vector<std::string>& add, const CallerEnv& caller);

}  // namespace kern::cli
