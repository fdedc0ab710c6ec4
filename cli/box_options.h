// BoxOptions: what the command line of `kern box` (and `kern kernel start`) said, as strings.
// No meaning is given to anything here; cli/spec_builder.cc turns it into a BoxSpec.
#pragma once

#include "cli/cli11.h"

#include "cli/docker_flags.h"
#include "cli/flag_filter.h"
#include "cli/limit_flags.h"
#include "cli/net_flags.h"

#include <optional>
#include <string>
#include <vector>

namespace kern::cli {

struct BoxOptions {
  std::vector<std::string> positionals;  // NAME and profile tokens, in order
  std::string image, rootfs, pull = "missing";
  bool read_only = false;
  std::vector<std::string> volumes, env, env_files, tmpfs, cap_drop, cap_add;
  std::vector<std::string> mounts;   // --mount type=bind|tmpfs,... (cli/mount_flags.h)
  std::optional<std::string> workdir, user;  // an empty value is refused, not taken as unset
  std::string hostname, security_profile, config;
  std::optional<std::string> net;  // "" when given bare; a name: kern network create's
  std::string pod;                 // --pod NAME
  std::vector<std::string> network_alias;  // --network-alias: more names in the pod's /etc/hosts
  NetOptions netx;                 // --egress-allow, ... (cli/net_flags.h)
  std::string timeout;  // "30", "2s", "500ms", "1m"; empty or "0" = none
  DockerOptions docker;  // --name, --entrypoint, --init, --privileged
  LimitOptions limits;  // -m, --cpus, ..., --require-limits, --allow-uncapped
  bool uid_range = false;
  bool plan = false, show_config = false, quiet = false;
  bool interactive = false, tty = false;
  std::optional<int> report_fd;
  std::vector<std::string> command;  // after "--"
};

// Adds the box flags to `cmd` (shared by `kern box` and `kern kernel start`).
void add_box_flags(CLI::App* cmd, BoxOptions& o, const FlagFilter& f = FlagFilter());
// An option group of `cmd` titled `title` in --help, for a verb with many flags (box_flags.cc);
// `cmd` itself when `f` builds only some flags (never for --help, so no heading is lost).
CLI::App* flag_group(CLI::App* cmd, const std::string& title, const FlagFilter& f = FlagFilter());

}  // namespace kern::cli
