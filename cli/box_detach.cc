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
  add_option(c, f, "--restart", d.restart, "restart policy of a detached box: no, on-failure[:N], always, unless-stopped");
  add_option(c, f, "--restart-max", d.restart_max, "at most N restarts, whatever the policy");
}

Status check_detach_flags(const DetachFlags& f) {
  if (!f.log_size.empty() && !f.detach)
    return fail(Error(ErrorKind::usage, 0, "--log-size: only a detached box (-d) has a log")
                    .with_hint("add -d, or drop --log-size"));
  KERN_TRY_ASSIGN(RestartPolicy p, restart_policy_of(f));
  if (p.mode != RestartMode::no && !f.detach)
    return fail(Error(ErrorKind::usage, 0, "--restart: only a detached box (-d) is restarted: its supervisor does it")
                    .with_hint("add -d"));
  if (p.mode != RestartMode::no && f.auto_remove)
    return fail(Error(ErrorKind::usage, 0, "--restart and --rm: a box that is removed when it exits is not restarted")
                    .with_hint("drop one of them"));
  if (f.restart_max != 0 && p.mode == RestartMode::no)
    return fail(Error(ErrorKind::usage, 0, "--restart-max: without a --restart policy nothing is restarted")
                    .with_hint("add --restart on-failure (or always)"));
  return {};
}

Result<RestartPolicy> restart_policy_of(const DetachFlags& f) {
  RestartPolicy p;
  if (!f.restart.empty()) {
    KERN_TRY_ASSIGN(p, parse_restart_policy(f.restart));
  }
  if (f.restart_max != 0 && (p.max_restarts == 0 || f.restart_max < p.max_restarts)) p.max_restarts = f.restart_max;
  return p;
}

Result<int> run_detached_box(BoxOptions o, const DetachFlags& f, TimingPage* timing) {
  DetachedOptions opts;
  opts.auto_remove = f.auto_remove;
  KERN_TRY_ASSIGN(opts.restart, restart_policy_of(f));
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
  KERN_TRY_ASSIGN(BuiltBox built, build_box_spec(o, kBoxClient));
  KERN_TRY(refuse_seccomp_audit(built.spec, "kern box -d"));
  built.spec.interactive = interactive;
  KERN_TRY(start_detached(built.spec, opts, timing));
  KERN_TRY(sys::write_all(STDOUT_FILENO, built.spec.name + "\n", "stdout"));
  return 0;
}

}  // namespace kern::cli
