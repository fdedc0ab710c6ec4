// The interpreters a warm kernel can hold and the command that starts each one's driver inside
// the box. The drivers are source files in runtime/kernel/drivers/ (python_driver.py,
// node_driver.js, bash_driver.sh), embedded in the kern binary at build time, so nothing
// is installed in the image. Parent side: used to build the box's argv.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::kernel {

enum class Lang {
  python,  // python3 with the embedded driver
  node,    // node with the embedded driver
  bash,    // bash with the embedded driver
  repl,    // any REPL given as a command: cells typed into its stdin, no driver
};

Result<Lang> parse_lang(std::string_view name);
std::string_view lang_name(Lang lang);

// The box's argv. For python/node/bash, `interpreter` (the words after "--", may be empty)
// replaces the default interpreter command ("python3", "node", "bash"); for repl it is the
// REPL's own command and must not be empty.
Result<std::vector<std::string>> driver_argv(Lang lang, const std::vector<std::string>& interpreter);

extern const char kPythonDriverSource[];
extern const char kNodeDriverSource[];
extern const char kBashDriverSource[];

}  // namespace kern::kernel
