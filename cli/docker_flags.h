// Docker's spellings of what kern box has (--name, --entrypoint, --init) and a one-line reason
// for what it refuses (--privileged). Added to `kern box` and `kern kernel start` by
// add_box_flags; given meaning in spec_builder.cc.
#pragma once

#include "cli/cli11.h"

#include <optional>
#include <string>
#include <vector>

#include "cli/flag_filter.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct DockerOptions {
  std::string name;                       // --name: the box name, as the bare word would be
  std::optional<std::string> entrypoint;  // --entrypoint: replaces the image's Entrypoint (and Cmd)
  bool init = false;                      // --init: accepted; kern always runs an init as PID 1
  bool privileged = false;                // --privileged: refused
  std::string apparmor;                   // --apparmor PROFILE, or --security-opt apparmor=PROFILE
  std::vector<std::string> security_opt;  // --security-opt: only apparmor=PROFILE is known
  std::vector<std::string> devices;       // --device HOST[:BOX][:PERMS] (cli/device_flags.h)
  std::vector<std::string> labels;        // -l/--label KEY[=VALUE]
  std::string stop_signal;                // --stop-signal SIG: what kern stop sends first
  std::optional<unsigned> stop_timeout;   // --stop-timeout SECS: kern stop's grace
  std::vector<std::string> ulimits;       // --ulimit NAME=SOFT[:HARD] (cli/ulimit_flags.h)
  std::vector<std::string> sysctls;       // --sysctl KEY=VALUE (cli/sysctl_flags.h)
  std::vector<std::string> secrets;       // --secret FILE[:NAME] (cli/secret_flags.h)
};

void add_docker_flags(CLI::App* cmd, DockerOptions& o, const FlagFilter& f = FlagFilter());

// The refusals (before anything is resolved or created). Returns the AppArmor profile the
// workload enters at exec: "" for none (and for "unconfined"), else one checked as loaded.
Result<std::string> check_docker_flags(const DockerOptions& o);

// The name from --name and the bare word: at most one of them; "" when neither.
Result<std::string> docker_box_name(const DockerOptions& o, const std::string& bare_name);

// The command to run: with --entrypoint, [ENTRYPOINT] + `command` (the image's Entrypoint and
// Cmd are both dropped, as docker run does; an empty --entrypoint leaves `command` alone);
// without it, nullopt (the image's Entrypoint and Cmd apply as usual).
std::optional<std::vector<std::string>> entrypoint_command(const DockerOptions& o,
                                                          const std::vector<std::string>& command);

}  // namespace kern::cli
