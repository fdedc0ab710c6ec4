// `kern box`: run one command in a new box (kern-box(1)).
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "cli/box_detach.h"
#include "cli/box_options.h"
#include "cli/spec_builder.h"
#include "cli/verb.h"
#include "runtime/launcher.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

BoxOptions g_box;
DetachFlags g_detach;

Result<int> run_box_verb() {
  uint64_t started = monotonic_ns();
  g_box.command = trailing_command();
  KERN_TRY(check_detach_flags(g_detach));
  if (g_detach.detach && !g_box.show_config && !g_box.plan) {
    TimingPage* timing = map_timing_page();
    if (timing) timing->ns[static_cast<int>(Phase::start)] = started;
    return run_detached_box(g_box, g_detach, timing);
  }
  KERN_TRY_ASSIGN(BuiltBox built, build_box_spec(g_box, "kern box"));
  // The phases are read only for KERN_TIMING and the report fd: without either, no page (its
  // shared mapping and first write cost a shmem file and a fault at every start).
  TimingPage* timing = nullptr;
  if (built.spec.timing || built.spec.report_fd >= 0) {
    timing = map_timing_page();
    if (timing) timing->ns[static_cast<int>(Phase::start)] = started;
  }
  mark(timing, Phase::spec);
  if (g_box.show_config) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, show_config(built), "stdout"));
    return 0;
  }
  if (g_box.plan) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, show_plan(built), "stdout"));
    return 0;
  }
  Result<int> code = run_box(built.spec, timing);
  if (!code) return code;
  // The box is gone and torn down, every record of it removed, its exit line written (kern
  // writes with write(2); stdio is flushed for anything that used it): what is left to run is
  // destructors of the command line and of statics, whose memory the kernel frees anyway.
  std::fflush(nullptr);
  ::_exit(*code);
}

void register_box(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("box", "run a command in a new box");
  add_box_flags(c, g_box);
  add_detach_flags(flag_group(c, "Detached boxes"), g_detach);  // see add_box_flags
  c->callback([&ctx] {
    ctx.table = ExitTable::box;
    ctx.action = run_box_verb;
  });
}

const VerbRegistration reg{10, "box", &register_box};

}  // namespace
}  // namespace kern::cli
