// `kern box -d`; see box_detach.h.
#include "cli/box_detach.h"

#include <unistd.h>

#include "cli/spec_builder.h"
#include "profiles/profile_token.h"
#include "profiles/units.h"
#include "runtime/detached/box_names.h"
#include "runtime/detached/supervisor_main.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {

void add_detach_flags(CLI::App* c, DetachFlags& d, const FlagFilter& f) {
  add_flag(c, f, "-d,--detach", d.detach, "run in the background: print the name, return once it runs");
  add_flag(c, f, "--rm", d.auto_remove, "remove the box's record and log when it exits");
  add_option(c, f, "--log-size", d.log_size, "size of a detached box's log ring (default 4m)");
}

Status check_detach_flags(const DetachFlags& f) {
  if (!f.log_size.empty() && !f.detach)
    return fail(Error(ErrorKind::usage, 0, "--log-size: only a detached box (-d) has a log")
                    .with_hint("add -d, or drop --log-size"));
  return {};
}

Result<int> run_detached_box(BoxOptions o, const DetachFlags& f, TimingPage* timing) {
  DetachedOptions opts;
  opts.auto_remove = f.auto_remove;
  if (!f.log_size.empty()) {
    auto size = profiles::parse_size(f.log_size);
    if (!size) return fail(std::move(size).error().with_context("--log-size"));
    if (*size < kMinLogSize || *size > kMaxLogSize)
      return fail(ErrorKind::usage, 0, "--log-size: " + f.log_size + " is outside 4k..1g");
    opts.log_size = *size;
  }
  bool named = !o.docker.name.empty();  // --name NAME
  for (const auto& p : o.positionals) named |= !profiles::looks_like_profile_token(p);
  if (!named) {
    // A generated name already in the registry (a live or an exited box) is drawn again; the
    // claim still decides, this only keeps the user from a refusal about a name they never gave.
    KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
    std::string name = readable_box_name(name_random());
    for (int i = 0; i < 32 && ::access((rt + "/boxes/" + name).c_str(), F_OK) == 0; ++i)
      name = readable_box_name(name_random());
    o.positionals.insert(o.positionals.begin(), name);
  }
  // The caller's terminal is not the box's: -dit needs none (kern attach brings one later).
  bool interactive = o.interactive;
  o.interactive = false;
  KERN_TRY_ASSIGN(BuiltBox built, build_box_spec(o, "kern box"));
  KERN_TRY(refuse_seccomp_audit(built.spec, "kern box -d"));
  built.spec.interactive = interactive;
  KERN_TRY(start_detached(built.spec, opts, timing));
  KERN_TRY(sys::write_all(STDOUT_FILENO, built.spec.name + "\n", "stdout"));
  return 0;
}

}  // namespace kern::cli
