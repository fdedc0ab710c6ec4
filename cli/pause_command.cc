// `kern pause NAME...`, `kern unpause NAME...` and `kern update [-m SIZE] [--cpus N] [--pids-limit N]
// NAME...`: the running box's cgroup, frozen and thawed (cgroup.freeze) or given new limits, which
// are read back and printed. A box without a cgroup (a host that delegates none) is refused: there
// is nothing kern could freeze or limit, and pretending would be worse (kern doctor says why).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "profiles/units.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace pause_verb {

std::vector<std::string> g_names;
std::string g_memory, g_cpus, g_pids;

Result<BoxRecord> running_with_cgroup(const std::string& rt, const std::string& name, const char* verb) {
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, name));
  if (record_exited(rec) || rec.state == "restarting")
    return fail(ErrorKind::config, 0, "the box \"" + rec.name + "\" is not running");
  if (rec.cgroup.empty() || ::access((rec.cgroup + "/cgroup.procs").c_str(), W_OK) != 0)
    return fail(Error(ErrorKind::host_unsupported, 0,
                      std::string("kern ") + verb + ": the box \"" + rec.name + "\" has no cgroup of its own")
                    .with_hint("this host delegates no cgroup v2 subtree to this user (kern doctor says why); "
                               "boxes started where one is delegated can be paused and updated"));
  return rec;
}

// cgroup.freeze, then cgroup.events until "frozen" says the same (every process stopped).
Status set_frozen(const BoxRecord& rec, bool frozen) {
  KERN_TRY(sys::write_knob(AT_FDCWD, rec.cgroup + "/cgroup.freeze", frozen ? "1" : "0"));
  const std::string want = frozen ? "frozen 1" : "frozen 0";
  for (int i = 0; i < 500; ++i) {
    auto ev = sys::read_file(AT_FDCWD, rec.cgroup + "/cgroup.events", 4096);
    if (ev && ev->find(want) != std::string::npos) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fail(ErrorKind::setup, 0, "the box \"" + rec.name + "\" did not " + (frozen ? "freeze" : "thaw") + " within 5 s");
}

Result<int> run_freeze(bool frozen) {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  for (const auto& n : g_names) {
    KERN_TRY_ASSIGN(BoxRecord rec, running_with_cgroup(rt, n, frozen ? "pause" : "unpause"));
    KERN_TRY(set_frozen(rec, frozen));
  }
  return 0;
}

Result<int> run_update() {
  if (g_memory.empty() && g_cpus.empty() && g_pids.empty())
    return fail(Error(ErrorKind::usage, 0, "kern update: nothing to change").with_hint("give -m SIZE, --cpus N or --pids-limit N"));
  std::vector<std::pair<std::string, std::string>> files;
  if (!g_memory.empty()) {
    KERN_TRY_ASSIGN(uint64_t m, profiles::parse_memory(g_memory));
    files.emplace_back("memory.max", std::to_string(m));
  }
  if (!g_cpus.empty()) {
    KERN_TRY_ASSIGN(double c, profiles::parse_cpus(g_cpus));
    files.emplace_back("cpu.max", std::to_string(static_cast<uint64_t>(std::llround(c * 100000))) + " 100000");
  }
  if (!g_pids.empty()) {
    KERN_TRY_ASSIGN(uint64_t p, profiles::parse_pids(g_pids));
    files.emplace_back("pids.max", std::to_string(p));
  }
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  std::string out;
  for (const auto& n : g_names) {
    KERN_TRY_ASSIGN(BoxRecord rec, running_with_cgroup(rt, n, "update"));
    for (const auto& [file, value] : files) {
      auto w = sys::write_knob(AT_FDCWD, rec.cgroup + "/" + file, value);
      if (!w) return fail(std::move(w).error().with_context("kern update " + rec.name + ": " + file));
      auto back = sys::read_file(AT_FDCWD, rec.cgroup + "/" + file, 4096);
      std::string b = back ? *back : "?";
      while (!b.empty() && b.back() == '\n') b.pop_back();
      out += rec.name + " " + file + " " + b + "\n";
    }
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_pause(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("pause", "freeze every process of running boxes (their cgroup)");
  c->add_option("names", g_names, "box names")->required();
  c->callback([&ctx] { ctx.action = [] { return run_freeze(true); }; });
}

void register_unpause(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("unpause", "thaw paused boxes");
  c->add_option("names", g_names, "box names")->required();
  c->callback([&ctx] { ctx.action = [] { return run_freeze(false); }; });
}

void register_update(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("update", "new memory, cpu or pids limits for running boxes, read back");
  c->add_option("names", g_names, "box names")->required();
  c->add_option("-m,--memory", g_memory, "memory.max (e.g. 256m)");
  c->add_option("--cpus", g_cpus, "cpu.max as CPUs (e.g. 0.5)");
  c->add_option("--pids-limit", g_pids, "pids.max");
  c->callback([&ctx] { ctx.action = run_update; });
}

const VerbRegistration reg_pause{32, "pause", &register_pause};
const VerbRegistration reg_unpause{33, "unpause", &register_unpause};
const VerbRegistration reg_update{34, "update", &register_update};

}  // namespace pause_verb
}  // namespace
}  // namespace kern::cli
