// Docker's spellings for kern box; see docker_flags.h.
#include "cli/docker_flags.h"

#include "runtime/apparmor.h"
#include "runtime/sys/log.h"

namespace kern::cli {

void add_docker_flags(CLI::App* c, DockerOptions& o, const FlagFilter& f) {
  add_option(c, f, "--name", o.name, "the box name (as the bare word after box)");
  add_option(c, f, "--entrypoint", o.entrypoint, "replace the image's Entrypoint and Cmd");
  add_flag(c, f, "--init", o.init, "accepted for docker: kern always runs an init as PID 1");
  add_flag(c, f, "--privileged", o.privileged, "refused: a kern box is never privileged");
  add_option(c, f, "--apparmor", o.apparmor, "enter this loaded AppArmor profile at exec (fail closed)");
  one_value(add_option(c, f, "--security-opt", o.security_opt, "apparmor=PROFILE"));
  one_value(add_option(c, f, "--device", o.devices, "grant host device node HOST[:BOX][:rwm] (checked by identity)"));
  one_value(add_option(c, f, "-l,--label", o.labels, "a label KEY=VALUE, for kern ps --filter label= and inspect"));
  add_option(c, f, "--stop-signal", o.stop_signal, "the signal kern stop sends first (default TERM)");
  add_option(c, f, "--stop-timeout", o.stop_timeout, "seconds kern stop waits before SIGKILL (default 10)");
  one_value(add_option(c, f, "--ulimit", o.ulimits, "a resource limit NAME=SOFT[:HARD] of the workload (nofile, nproc, core...)"));
  one_value(add_option(c, f, "--secret", o.secrets, "FILE[:NAME]: the file as /run/secrets/NAME (0400, a tmpfs, never the environment)"));
  one_value(add_option(c, f, "--sysctl", o.sysctls, "a kernel knob KEY=VALUE of the box's own namespaces (net.*, kernel.shm*...)"));
}

Result<std::string> check_docker_flags(const DockerOptions& o) {
  if (o.privileged)
    return fail(Error(ErrorKind::usage, 0,
                      "--privileged is refused: a kern box never gets the host's devices, every capability "
                      "or no seccomp filter")
                    .with_hint("grant what the workload needs: --cap-add CAP, vgpio: profiles, "
                               "KERN_SECCOMP=denylist"));
  std::string profile = o.apparmor;
  for (const auto& opt : o.security_opt) {
    if (opt.rfind("apparmor=", 0) != 0)
      return fail(Error(ErrorKind::usage, 0, "--security-opt \"" + log::sanitize(opt) + "\" is not supported")
                      .with_hint("kern knows --security-opt apparmor=PROFILE; seccomp is chosen with KERN_SECCOMP"));
    std::string p = opt.substr(9);
    if (!profile.empty() && p != profile)
      return fail(Error(ErrorKind::usage, 0, "two AppArmor profiles: \"" + log::sanitize(profile) + "\" and \"" +
                                                 log::sanitize(p) + "\""));
    profile = p;
  }
  if (o.security_opt.size() > 0 || !o.apparmor.empty()) {
    if (profile.empty()) return fail(Error(ErrorKind::usage, 0, "--apparmor: the profile name is empty"));
    // As docker's apparmor=unconfined: no profile is entered (the workload stays as kern runs).
    if (profile == "unconfined") return std::string();
    KERN_TRY(check_apparmor_profile("/", profile, "--apparmor " + log::sanitize(profile)));
  }
  return profile;
}

Result<std::string> docker_box_name(const DockerOptions& o, const std::string& bare_name) {
  if (o.name.empty()) return bare_name;
  if (!bare_name.empty() && bare_name != o.name)
    return fail(Error(ErrorKind::usage, 0,
                      "two box names: \"" + log::sanitize(bare_name) + "\" and --name \"" + log::sanitize(o.name) +
                          "\"")
                    .with_hint("give the name once, as --name NAME or as the word after box"));
  return o.name;
}

std::optional<std::vector<std::string>> entrypoint_command(const DockerOptions& o,
                                                          const std::vector<std::string>& command) {
  if (!o.entrypoint) return std::nullopt;
  std::vector<std::string> argv;
  if (!o.entrypoint->empty()) argv.push_back(*o.entrypoint);
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace kern::cli
