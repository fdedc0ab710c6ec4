// `kern wait [--json] NAME`: blocks until the box exits, prints its exit code and exits with it.
#include <unistd.h>

#include <chrono>
#include <thread>
#include <nlohmann/json.hpp>

#include "cli/box_lookup.h"
#include "cli/verb.h"
#include "runtime/detached/wire.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace wait_verb {

std::string g_name;
bool g_json = false;

// The exit code from the supervisor's last frame, or from the kept record.
Result<int> wait_exit(const std::string& rt) {
  for (;;) {
    KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_name));
    if (record_exited(rec)) return rec.exit_code;
    if (!rec.detached) {
      // A foreground box: its launcher has the code; here we can only see it end.
      if (!launcher_alive(rec)) continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (auto fd = ask_box(rt, g_name, "wait"); fd) {
      std::string buf;
      for (;;) {
        auto f = read_frame(fd->get(), buf);
        if (!f || !*f) break;
        if ((*f)->type == WireType::exit) return std::stoi((*f)->payload);
      }
    }
    // Between the socket's removal and the exited record: look again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<int> run_wait() {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRecord rec, find_box(rt, g_name));
  if (!rec.detached && !record_exited(rec))
    return fail(Error(ErrorKind::config, 0, "the box \"" + g_name + "\" runs in the foreground")
                    .with_hint("its exit code is its launcher's: wait for that process instead"));
  KERN_TRY_ASSIGN(int code, wait_exit(rt));
  std::string out = g_json ? nlohmann::json{{"name", g_name}, {"exit_code", code}}.dump() + "\n"
                           : std::to_string(code) + "\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return code;
}

void register_wait(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("wait", "wait for a detached box to exit; print and return its code");
  c->add_option("name", g_name, "box name")->required();
  c->add_flag("--json", g_json, "{\"name\":...,\"exit_code\":N}");
  c->callback([&ctx] { ctx.action = run_wait; });
}

const VerbRegistration reg{25, "wait", &register_wait};

}  // namespace wait_verb
}  // namespace
}  // namespace kern::cli
