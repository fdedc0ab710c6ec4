// `kern bench --rootfs DIR [-n N] [--json]`: starts N boxes running /bin/true one after another
// with the full default lockdown and prints the whole-process wall time (min, median, max). Each
// box is this binary started afresh, as a caller would start it.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "runtime/sys/fdio.h"
#include "runtime/timing.h"

extern char** environ;

namespace kern::cli {
namespace {
namespace bench_verb {

std::string g_rootfs, g_image;
unsigned g_n = 20;
bool g_json = false;

Result<int> run_bench() {
  if (g_rootfs.empty() == g_image.empty()) return fail(ErrorKind::usage, 0, "kern bench: give --rootfs DIR or --image REF");
  if (g_n == 0 || g_n > 10000) return fail(ErrorKind::usage, 0, "kern bench: -n must be 1..10000");
  std::vector<std::string> args = {"/proc/self/exe", "box", "-q", "--allow-uncapped",
                                   g_rootfs.empty() ? "--image" : "--rootfs",
                                   g_rootfs.empty() ? g_image : g_rootfs, "--", "/bin/true"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<double> ms;
  for (unsigned i = 0; i <= g_n; ++i) {  // the first run warms the caches and is not counted
    uint64_t t = monotonic_ns();
    pid_t pid;
    if (int rc = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ); rc != 0)
      return fail(ErrorKind::setup, rc, "posix_spawn kern box");
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return fail(ErrorKind::setup, 0, "a benchmark box failed (status " + std::to_string(st) + "); run it by hand to see why");
    if (i > 0) ms.push_back(static_cast<double>(monotonic_ns() - t) / 1e6);
  }
  std::vector<double> in_order = ms;
  std::sort(ms.begin(), ms.end());
  if (g_json) {
    // The text's facts, and each run's time in the order they ran.
    nlohmann::json j{{"command", "kern box /bin/true"},
                     {g_rootfs.empty() ? "image" : "rootfs", g_rootfs.empty() ? g_image : g_rootfs},
                     {"runs", g_n},
                     {"min_ms", ms.front()},
                     {"median_ms", ms[ms.size() / 2]},
                     {"max_ms", ms.back()},
                     {"runs_ms", in_order}};
    KERN_TRY(sys::write_all(STDOUT_FILENO, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                            "stdout"));
    return 0;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "kern box /bin/true, %u runs: min %.2f ms, median %.2f ms, max %.2f ms\n", g_n,
                ms.front(), ms[ms.size() / 2], ms.back());
  KERN_TRY(sys::write_all(STDOUT_FILENO, buf, "stdout"));
  return 0;
}

void register_bench(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("bench", "time box starts on this host");
  c->add_option("--rootfs", g_rootfs, "root file system directory");
  c->add_option("--image", g_image, "image reference");
  c->add_option("-n", g_n, "runs (default 20)");
  c->add_flag("--json", g_json, "one JSON object: the runs and their min, median and max");
  c->callback([&ctx] { ctx.action = run_bench; });
}

const VerbRegistration reg{91, "bench", &register_bench};

}  // namespace bench_verb
}  // namespace
}  // namespace kern::cli
