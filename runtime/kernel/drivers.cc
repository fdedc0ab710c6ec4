// Driver commands; see drivers.h. Parent side.
#include "runtime/kernel/drivers.h"

namespace kern::kernel {

Result<Lang> parse_lang(std::string_view name) {
  if (name == "python" || name == "python3") return Lang::python;
  if (name == "node" || name == "javascript" || name == "js") return Lang::node;
  if (name == "bash") return Lang::bash;
  return fail(ErrorKind::usage, 0,
              "--lang: \"" + std::string(name.substr(0, 40)) + "\" is not python, node or bash "
              "(any other REPL: give its command after \"--\")");
}

std::string_view lang_name(Lang lang) {
  switch (lang) {
    case Lang::python: return "python";
    case Lang::node: return "node";
    case Lang::bash: return "bash";
    case Lang::repl: return "repl";
  }
  return "repl";
}

Result<std::vector<std::string>> driver_argv(Lang lang, const std::vector<std::string>& interpreter) {
  std::vector<std::string> argv = interpreter;
  switch (lang) {
    case Lang::python:
      if (argv.empty()) argv = {"python3"};
      // -c runs the driver under its own file name, so its frames can be told from the cell's.
      argv.insert(argv.end(), {"-c", "import sys;exec(compile(sys.argv[1],'<kern-driver>','exec'))",
                               kPythonDriverSource});
      return argv;
    case Lang::node:
      if (argv.empty()) argv = {"node"};
      argv.insert(argv.end(), {"-e", kNodeDriverSource});
      return argv;
    case Lang::bash:
      if (argv.empty()) argv = {"bash"};
      argv.insert(argv.end(), {"--norc", "--noprofile", "-c", kBashDriverSource, "kern-kernel"});
      return argv;
    case Lang::repl:
      if (argv.empty())
        return fail(ErrorKind::usage, 0, "a REPL kernel needs its command after \"--\" (or --lang)");
      return argv;
  }
  return argv;
}

}  // namespace kern::kernel
