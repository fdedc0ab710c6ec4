// The systemd unit of a detached box (`kern generate systemd`): a user service that starts the box
// at boot (with linger) or login as it was created, and stops it with kern stop. Pure.
//
// Type=oneshot with RemainAfterExit: `kern box -d` returns once the box runs, its supervisor
// (not a daemon: one per box) keeps it up and applies its --restart policy; systemd's part is to
// start it, and to stop it with kern stop (whose grace is the box's stop timeout).
#pragma once

#include <string>
#include <vector>

namespace kern::cli {

struct UnitInput {
  std::string name;                     // the box's
  std::string kern_path;                // absolute: systemd runs no PATH lookup for us
  std::vector<std::string> create_argv; // the `kern box -d ...` words the box was made with
  unsigned stop_timeout_s = 10;
};

// The unit's text. The box's name is put on the command line when it was generated.
std::string systemd_unit(const UnitInput& in);

// One word quoted as systemd's ExecStart= reads it: double quotes, \ and " escaped, control
// bytes as \xNN, % as %%, $ as $$ (no specifier or variable expansion).
std::string systemd_word(const std::string& word);

}  // namespace kern::cli
