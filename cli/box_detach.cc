// `kern box -d`; see box_detach.h.
#include "cli/box_detach.h"

#include <fcntl.h>
#include <unistd.h>

#include "cli/spec_builder.h"
#include "cli/volume_use.h"
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
  add_option(c, f, "--health-cmd", d.health_cmd, "health check: a command run in the box by /bin/sh -c (exit 0: healthy)");
  add_option(c, f, "--health-interval", d.health_interval, "time between health checks (default 30s)");
  add_option(c, f, "--health-timeout", d.health_timeout, "a health check that runs longer fails (default 30s)");
  add_option(c, f, "--health-retries", d.health_retries, "failures in a row that make the box unhealthy (default 3)");
  add_option(c, f, "--health-start-period", d.health_start_period, "failures this soon after the start do not count (default 0)");
  add_option(c, f, "--health-on-failure", d.health_on_failure, "what an unhealthy box gets: none, kill, restart, stop");
  add_flag(c, f, "--no-healthcheck", d.no_healthcheck, "no health check, not even the image's");
}

namespace {

bool any_health_flag(const DetachFlags& f) {
  return !f.health_cmd.empty() || !f.health_interval.empty() || !f.health_timeout.empty() ||
         !f.health_start_period.empty() || !f.health_on_failure.empty() || f.health_retries >= 0;
}

Result<uint64_t> health_duration(const std::string& text, const char* flag) {
  auto ms = profiles::parse_duration_ms(text);
  if (!ms) return fail(std::move(ms).error().with_context(flag));
  return *ms;
}

}  // namespace

Result<HealthConfig> health_config_of(const DetachFlags& f, const std::optional<oci::ImageHealthcheck>& image) {
  HealthConfig c;
  if (f.no_healthcheck) {
    if (any_health_flag(f))
      return fail(Error(ErrorKind::usage, 0, "--no-healthcheck and --health-*: there is no check to set")
                      .with_hint("drop one of them"));
    return c;
  }
  if (image && !image->test.empty()) {
    const auto& t = image->test;
    if (t[0] == "CMD" && t.size() > 1) c.test.assign(t.begin() + 1, t.end());
    else if (t[0] == "CMD-SHELL" && t.size() > 1) c.test = {"/bin/sh", "-c", t[1]};
    // ["NONE"] (or a form kern does not know) leaves the box without one.
    if (image->interval_ns) c.interval_ms = image->interval_ns / 1000000;
    if (image->timeout_ns) c.timeout_ms = image->timeout_ns / 1000000;
    if (image->start_period_ns) c.start_period_ms = image->start_period_ns / 1000000;
    if (image->retries) c.retries = image->retries;
  }
  if (!f.health_cmd.empty()) c.test = {"/bin/sh", "-c", f.health_cmd};
  if (!f.health_interval.empty()) {
    KERN_TRY_ASSIGN(c.interval_ms, health_duration(f.health_interval, "--health-interval"));
  }
  if (!f.health_timeout.empty()) {
    KERN_TRY_ASSIGN(c.timeout_ms, health_duration(f.health_timeout, "--health-timeout"));
  }
  if (!f.health_start_period.empty()) {
    KERN_TRY_ASSIGN(c.start_period_ms, health_duration(f.health_start_period, "--health-start-period"));
  }
  if (f.health_retries >= 0) c.retries = static_cast<unsigned>(f.health_retries);
  if (!f.health_on_failure.empty()) {
    KERN_TRY_ASSIGN(c.on_failure, parse_health_action(f.health_on_failure));
  }
  if (c.interval_ms == 0 || c.timeout_ms == 0 || c.retries == 0)
    return fail(Error(ErrorKind::usage, 0, "--health-interval, --health-timeout and --health-retries must be above 0")
                    .with_hint("e.g. --health-interval 10s --health-timeout 5s --health-retries 3"));
  if (!c.enabled() && any_health_flag(f))
    return fail(Error(ErrorKind::usage, 0, "--health-*: the box has no health check to set them on")
                    .with_hint("give --health-cmd CMD (or use an image with a Healthcheck)"));
  return c;
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
  if ((any_health_flag(f) || f.no_healthcheck) && !f.detach)
    return fail(Error(ErrorKind::usage, 0, "--health-*: only a detached box (-d) is checked: its supervisor runs the checks")
                    .with_hint("add -d"));
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
  if (auto cmdline = sys::read_file(AT_FDCWD, "/proc/self/cmdline", 1 << 20)) {
    for (size_t pos = 0; pos < cmdline->size();) {
      size_t end = cmdline->find('\0', pos);
      if (end == std::string::npos) end = cmdline->size();
      opts.create_argv.push_back(cmdline->substr(pos, end - pos));
      pos = end + 1;
    }
  }
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) opts.kern_path.assign(exe, static_cast<size_t>(n));
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
  std::optional<oci::ImageHealthcheck> image_check;
  if (built.image) image_check = built.image->config.healthcheck;
  KERN_TRY_ASSIGN(opts.health, health_config_of(f, image_check));
  built.spec.interactive = interactive;
  KERN_TRY(with_box_volumes(built.spec, [&] { return start_detached(built.spec, opts, timing); }));
  KERN_TRY(sys::write_all(STDOUT_FILENO, built.spec.name + "\n", "stdout"));
  return 0;
}

}  // namespace kern::cli
