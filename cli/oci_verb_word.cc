// Which verb an OCI runtime command line names; see oci_verb_word.h.
#include "cli/oci_verb_word.h"

namespace kern::cli {
namespace {

// runc's global flags as kern-oci has them: those that take the next word as their value, and
// those that take none.
bool takes_value(std::string_view w) { return w == "--root" || w == "--log" || w == "--log-format" || w == "--rootless"; }

bool global_flag(std::string_view w) {
  if (w == "--systemd-cgroup" || w == "--debug") return true;
  for (std::string_view p : {"--root=", "--log=", "--log-format=", "--rootless="})
    if (w.substr(0, p.size()) == p) return true;
  return false;
}

bool asks_help(std::string_view w) { return w == "--help" || w == "--help-all" || w == "-h"; }

}  // namespace

int oci_verb_named(int argc, const char* const* argv, const char* const* verbs, int count) {
  if (argc < 1 || !argv[0]) return -1;
  std::string_view self = argv[0];
  int i = 1;
  if (self.substr(self.rfind('/') + 1) != "kern-oci") {
    if (argc < 2 || std::string_view(argv[1]) != "oci") return -1;
    i = 2;
  }
  for (; i < argc; ++i) {
    std::string_view w = argv[i];
    if (takes_value(w)) {
      ++i;
      continue;
    }
    if (global_flag(w)) continue;
    if (w.empty() || w[0] == '-') return -1;  // help, --version, "--", or a flag not known here
    int found = -1;
    for (int v = 0; v < count; ++v)
      if (w == verbs[v]) found = v;
    if (found < 0) return -1;
    for (int j = i + 1; j < argc; ++j) {
      std::string_view h = argv[j];
      if (h == "--") break;
      if (asks_help(h)) return -1;
    }
    return found;
  }
  return -1;
}

}  // namespace kern::cli
