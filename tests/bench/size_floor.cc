// The size floor of the kern binary (issue 13's stripped-binary row): the smallest C++ program that
// uses what kern cannot do without, linked the way kern is (start_bench.py builds it three ways).
//   base          std::string, vector, map, function, optional, variant, exceptions, snprintf,
//                 fork and exec: what the box path's own code leans on
//   -DSTREAMS     and one std::ostringstream: CLI11 formats help, validators and errors with
//                 string streams, which bring in std::locale and every facet
//   -DDL          and dlopen and getaddrinfo: the image libraries (oci/dl/) and the egress relay
// None of kern's code is in it: what kern adds on top is its own.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>
#ifdef STREAMS
#include <sstream>
#endif
#ifdef DL
#include <dlfcn.h>
#include <netdb.h>
#endif

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::map<std::string, std::function<int(const std::string&)>> verbs;
  verbs["box"] = [](const std::string& s) { return static_cast<int>(s.size()); };
  std::optional<std::variant<int, std::string>> v;
  if (argc > 3) v = args[1];
  try {
    if (argc > 5) throw std::runtime_error("x" + args[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%d %s", verbs["box"](args[0]), v ? "v" : "");
#ifdef STREAMS
  std::ostringstream o;
  o << argc << buf;
  if (o.str().empty()) return 1;
#endif
#ifdef DL
  if (argc > 7) {
    if (!dlopen(argv[1], RTLD_NOW)) return 1;
    addrinfo* r = nullptr;
    if (getaddrinfo(argv[2], nullptr, nullptr, &r) != 0) return 1;
  }
#endif
  pid_t p = fork();
  if (p == 0) {
    execv("/bin/true", argv);
    _exit(127);
  }
  int st = 0;
  waitpid(p, &st, 0);
  return buf[0] == 0;
}
