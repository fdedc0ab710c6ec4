// `kern run [--memory M] [--cpus N] [vcpu:P] -- CMD [ARG...]` (kern.toml(5)): the caps of a
// box on a plain host process, no sandbox. The process runs in its own cgroup (found like a
// box's, named run-...), dies with kern (PR_SET_PDEATHSIG), and whatever it leaves running in
// the cgroup is killed at exit. Exit codes as kern box: the command's own, 128+N when killed by
// signal N, 125 when kern failed before the command ran, 126/127 when it could not be executed.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cli/limit_flags.h"
#include "cli/profile_apply.h"
#include "cli/verb.h"
#include "profiles/profile_token.h"
#include "profiles/units.h"
#include "runtime/blocked_signals.h"
#include "runtime/cgroup/box_cgroup.h"
#include "runtime/exit_status.h"
#include "runtime/launcher_loop.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
namespace run_verb {

struct RunOptions {
  std::vector<std::string> tokens;
  LimitOptions limits;
  std::string config;
  bool quiet = false;
};
RunOptions g_run;

Result<BoxSpec> build_spec(const RunOptions& o, ExplicitFlags& ex) {
  BoxSpec spec;
  spec.name = "run";
  spec.argv = trailing_command();
  if (spec.argv.empty())
    return fail(Error(ErrorKind::usage, 0, "kern run: no command")
                    .with_hint("kern run [--memory M] [--cpus N] [vcpu:P] -- CMD [ARG...]"));
  for (const auto& t : o.tokens) {
    if (!profiles::looks_like_profile_token(t))
      return fail(Error(ErrorKind::usage, 0, "kern run: unexpected argument \"" + log::sanitize(t) + "\"")
                      .with_hint("put the command after \"--\": kern run [FLAGS] -- " + log::sanitize(t) + " ..."));
    KERN_TRY_ASSIGN(profiles::ProfileToken tok, profiles::parse_profile_token(t));
    if (tok.kind != profiles::ProfileKind::vcpu)
      return fail(ErrorKind::config, 0,
                  "profile token \"" + log::sanitize(t) + "\": kern run takes vcpu: profiles only (" +
                      std::string(profiles::profile_kind_name(tok.kind)) + ": needs a box: kern box)");
  }
  KERN_TRY(build_limits(o.limits, spec, ex));
  KERN_TRY(apply_profiles(o.tokens, o.config, spec, ex));
  return spec;
}

// The child: waits until it sits in its cgroup, then execs. Reports an exec failure's errno on
// `err_fd` (close-on-exec: end-of-file means the exec happened).
[[noreturn]] void child(const BoxSpec& spec, pid_t parent, int go_fd, int err_fd, const sigset_t& old_mask) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(125);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  char go = 0;
  ssize_t n;
  do n = ::read(go_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) ::_exit(125);
  // Without a cgroup the nice value still applies to the process itself.
  if (spec.limits.nice) ::setpriority(PRIO_PROCESS, 0, *spec.limits.nice);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  int e = errno;
  (void)sys::write_all_raw(err_fd, &e, sizeof e);
  ::_exit(127);
}

Result<int> run_run() {
  if (g_run.quiet) log::set_quiet(true);
  ExplicitFlags ex;
  KERN_TRY_ASSIGN(BoxSpec spec, build_spec(g_run, ex));

  std::optional<BoxCgroup> cg;
  if (spec.cgroup_policy != CgroupPolicy::none) {
    auto host = probe_cgroup_host();
    if (!host) return fail(std::move(host).error().with_context("finding cgroup v2"));
    KERN_TRY_ASSIGN(cg, BoxCgroup::create_in(*host, "run", "p", spec.limits, spec.cgroup_policy,
                                                  spec.default_caps_warning));
  }

  UniqueFd go_write, err_write;
  KERN_TRY_ASSIGN(UniqueFd go_read, sys::make_pipe(O_CLOEXEC, &go_write));
  KERN_TRY_ASSIGN(UniqueFd err_read, sys::make_pipe(O_CLOEXEC, &err_write));
  // The caller's signals are forwarded to the command as kern box forwards them to a box
  // (supervise(), runtime/launcher_loop.h): blocked from before the fork, none is lost.
  BlockedSignals sigs;
  if (sigs.fd() < 0) return fail_errno("signalfd");
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork");
  if (pid == 0) child(spec, parent, go_read.get(), err_write.get(), sigs.old_mask());
  go_read.reset();
  err_write.reset();

  auto reap = [&]() {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  };
  if (cg) {
    if (auto a = cg->attach(pid); !a) {
      ::kill(pid, SIGKILL);
      reap();
      (void)cg->remove();
      return fail(std::move(a).error().with_context("moving the command into its cgroup"));
    }
    Enforcement e = cg->read_back(spec.limits);
    if (spec.cgroup_policy == CgroupPolicy::require && !limits_in_force(e)) {
      ::kill(pid, SIGKILL);
      reap();
      (void)cg->remove();
      return fail(ErrorKind::host_unsupported, 0,
                  "--require-limits: memory " + verdict_name(e.memory) + ", pids " + verdict_name(e.pids));
    }
  }
  (void)sys::write_all_raw(go_write.get(), "G", 1);
  go_write.reset();
  int exec_errno = 0;
  ssize_t n;
  do n = ::read(err_read.get(), &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    reap();
    if (cg) (void)cg->remove();
    return fail(Error(ErrorKind::workload, exec_errno, "execvp \"" + log::sanitize(spec.argv[0]) + "\""));
  }
  if (cg) cg->reap_others();
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) {
    ::kill(pid, SIGKILL);
    reap();
    if (cg) (void)cg->remove();
    return fail_errno("pidfd_open " + std::to_string(pid));
  }
  if (auto w = supervise(SuperviseInput{pidfd.get(), 0, sigs.fd(), -1, false}); !w) {
    ::kill(pid, SIGKILL);
    reap();
    if (cg) (void)cg->remove();
    return fail(std::move(w).error());
  }
  int status = reap();
  if (cg) {
    MemoryEvents ev = cg->events();
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && ev.oom_kill > 0)
      log::note("the command was killed by the out-of-memory killer (memory.max " +
                profiles::format_size(effective_memory_max(spec.limits)) + ")");
    (void)cg->remove();
  }
  return exit_code_from_wait_status(status);
}

void register_run(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("run", "run a host command under a box's caps, no sandbox");
  RunOptions& o = g_run;
  c->add_option("tokens", o.tokens, "vcpu: profile tokens");
  add_limit_flags(c, o.limits);
  c->add_option("--config", o.config, "kern.toml for profile tokens");
  c->add_flag("-q,--quiet", o.quiet, "no notes or warnings");
  c->callback([&ctx] {
    ctx.table = ExitTable::box;
    ctx.action = run_run;
  });
}

const VerbRegistration reg{15, "run", &register_run};

}  // namespace run_verb
}  // namespace
}  // namespace kern::cli
