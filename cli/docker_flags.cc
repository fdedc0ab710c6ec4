// Docker's spellings for kern box; see docker_flags.h.
#include "cli/docker_flags.h"

#include "runtime/sys/log.h"

namespace kern::cli {

void add_docker_flags(CLI::App* c, DockerOptions& o) {
  c->add_option("--name", o.name, "the box name (as the bare word after box)");
  c->add_option("--entrypoint", o.entrypoint, "replace the image's Entrypoint and Cmd");
  c->add_flag("--init", o.init, "accepted for docker: kern always runs an init as PID 1");
  c->add_flag("--privileged", o.privileged, "refused: a kern box is never privileged");
}

Status check_docker_flags(const DockerOptions& o) {
  if (o.privileged)
    return fail(Error(ErrorKind::usage, 0,
                      "--privileged is refused: a kern box never gets the host's devices, every capability "
                      "or no seccomp filter")
                    .with_hint("grant what the workload needs: --cap-add CAP, vgpio: profiles, "
                               "KERN_SECCOMP=denylist"));
  return {};
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
