// Profile tokens -> BoxSpec (kern.toml(5)). Called by cli/spec_builder.cc (kern box, kernel
// start) and cli/run_command.cc (kern run), after the flags are in the spec.
//
// Precedence: an explicit flag beats a profile, a profile beats the built-in default. The
// built-in defaults are not written here: a Limits field left empty means "default" and
// runtime/cgroup/box_cgroup.cc applies it when the box gets a cgroup. So:
//   - a field the caller marked in ExplicitFlags is never touched (a note says the flag won);
//   - with several vcpu: tokens the first to set a field wins; a later different value is
//     ignored with a `kern: warning:`;
//   - vdisk: and vgpio: tokens stack (a name used twice is applied once).
// vdisk with backend "ram" appends a TmpfsMount at /vdisk/NAME to spec.tmpfs (with a note that it
// counts against the box's memory); vdisk on a [[disk]] backend (or the default [[disk]]) appends
// an ephemeral BindMount of a fresh per-box directory on that disk (persistent = true: one kept
// directory per user and profile, which the launcher creates when missing) and warns that the
// size is not enforced (an unprivileged user cannot create a size-capped file system on a disk);
// its iops/bandwidth (else the disk's) become io.max of the disk's whole device, field by field
// under what a flag set. A vcpu nice also goes to the workload's setpriority (with a warning
// when the host will refuse a lowering). vgpio appends
// DeviceGrant entries to spec.devices, each checked by device identity (major:minor) on this
// host; a listed node that is missing is skipped with a warning; a refused one is an error.
//
// Every error is kind config (exit 125 for kern box) and names the token or file:line:column.
// Nothing is created on the host by these functions.
#pragma once

#include <string>
#include <vector>

#include "profiles/profile_types.h"
#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// Which Limits fields were set by an explicit flag (or its environment variable).
struct ExplicitFlags {
  bool memory = false;       // -m / --memory
  bool memory_swap = false;  // --memory-swap-max
  bool cpus = false;         // --cpus
  bool cpuset = false;       // --cpuset-cpus
  bool pids = false;         // --pids-limit
  bool nice = false;
};

// What the profiles did, for --plan and --show-config ("vcpu:heavy: cpu.max 150000 100000").
struct ProfileReport {
  std::vector<std::string> plan;  // one line per decision, already sanitized
};

// Reads and validates kern.toml: `config_path` if not empty (--config; a missing file is an
// error), else KERN_CONFIG, else the XDG default (a missing file is an empty ProfileSet).
Result<profiles::ProfileSet> load_profile_set(const std::string& config_path);

// Applies parsed tokens in order against `set`.
Status apply_profiles(const std::vector<std::string>& tokens, const profiles::ProfileSet& set,
                      BoxSpec& spec, const ExplicitFlags& explicit_flags,
                      ProfileReport* report = nullptr);

// The usual entry point: parses `tokens`, loads the configuration only when there is a token
// (a box without tokens never reads kern.toml here), then applies. `config_path` as above. It
// also installs runtime/cgroup/box_cgroup.h's default-caps warning check, which reads [kern] warn_uncapped
// (from the set already loaded, else from the file) only if a box gets no cgroup and asked for
// no cap.
Status apply_profiles(const std::vector<std::string>& tokens, const std::string& config_path,
                      BoxSpec& spec, const ExplicitFlags& explicit_flags,
                      ProfileReport* report = nullptr);

}  // namespace kern::cli
