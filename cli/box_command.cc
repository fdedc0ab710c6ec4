// `kern box`: run one command in a new box (kern-box(1)).
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "cli/box_detach.h"
#include "cli/box_options.h"
#include "cli/spec_builder.h"
#include "cli/volume_use.h"
#include "cli/verb.h"
#include "oci/box_platform.h"
#include "oci/manifest.h"
#include "runtime/launcher.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace box_verb {

BoxOptions g_box;
DetachFlags g_detach;
bool g_json = false;  // --plan/--show-config as JSON

Result<int> run_box_verb() {
  uint64_t started = monotonic_ns();
  g_box.command = trailing_command();
  KERN_TRY(check_detach_flags(g_detach));
  if (g_json && !g_box.show_config && !g_box.plan)
    return fail(ErrorKind::usage, 0, "--json goes with --plan or --show-config");
  if (g_detach.detach && !g_box.show_config && !g_box.plan) {
    TimingPage* timing = map_timing_page();
    if (timing) timing->ns[static_cast<int>(Phase::start)] = started;
    return run_detached_box(g_box, g_detach, timing);
  }
  KERN_TRY_ASSIGN(BuiltBox built, build_box_spec(g_box, kBoxClient));
  // The phases are read only for KERN_TIMING and the report fd: without either, no page (its
  // shared mapping and first write cost a shmem file and a fault at every start).
  TimingPage* timing = nullptr;
  if (built.spec.timing || built.spec.report_fd >= 0) {
    timing = map_timing_page();
    if (timing) timing->ns[static_cast<int>(Phase::start)] = started;
  }
  mark(timing, Phase::spec);
  if (g_box.show_config) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, g_json ? show_config_json(built) : show_config(built), "stdout"));
    return 0;
  }
  if (g_box.plan) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, g_json ? show_plan_json(built) : show_plan(built), "stdout"));
    return 0;
  }
  Result<int> code = with_box_volumes(built.spec, [&] { return run_box(built.spec, timing); });
  if (!code) {
    // A program the kernel has no loader for, in an image made for another machine: say which.
    Error& e = code.error();
    if (e.kind() == ErrorKind::workload && e.sys_errno() == ENOEXEC && built.image) {
      std::string hint = oci::exec_format_hint(built.image->architecture, oci::host_architecture());
      if (!hint.empty()) e.with_hint(std::move(hint));
    }
    return code;
  }
  // The box is gone and torn down, every record of it removed, its exit line written (kern
  // writes with write(2); stdio is flushed for anything that used it): what is left to run is
  // destructors of the command line and of statics, whose memory the kernel frees anyway.
  std::fflush(nullptr);
  ::_exit(*code);
}

// The flags to build: those the words before the command's "--" can name when the command line
// is `kern box ...` (a box start names a handful of about fifty); every one for help, for
// `kern completion` and the help listing, and when the verb is reached any other way.
FlagFilter box_flag_filter(const VerbContext& ctx) {
  const RawArgs& a = raw_args();
  if (ctx.all_flags || a.argc < 2 || std::string_view(a.argv[1]) != "box") return FlagFilter();
  std::vector<std::string> words;
  for (int i = 2; i < a.argc && std::string_view(a.argv[i]) != "--"; ++i) words.emplace_back(a.argv[i]);
  return FlagFilter(words);
}

void register_box(CLI::App& app, VerbContext& ctx) {
  // A second build (after a failed parse) starts from the defaults again.
  g_box = BoxOptions{};
  g_detach = DetachFlags{};
  g_json = false;
  FlagFilter f = box_flag_filter(ctx);
  ctx.flags_filtered = !f.everything();
  CLI::App* c = app.add_subcommand("box", "run a command in a new box");
  add_box_flags(c, g_box, f);
  add_flag(c, f, "--json", g_json, "with --plan or --show-config: one JSON object");
  add_detach_flags(flag_group(c, "Detached boxes", f), g_detach, f);  // see add_box_flags
  c->callback([&ctx] {
    ctx.table = ExitTable::box;
    ctx.action = run_box_verb;
  });
}

const VerbRegistration reg{10, "box", &register_box};

}  // namespace box_verb
}  // namespace
}  // namespace kern::cli
