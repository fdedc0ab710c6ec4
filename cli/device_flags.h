// Docker's --device HOST[:BOX][:PERMS] for kern box (kern-box(1)), mapped onto the device grants
// of vgpio profiles: the node is decided by its identity (character device, major:minor, the
// kernel's names for it) with the same refusals as a vgpio node, and the launcher binds exactly
// that node, refusing it if what it opens is no longer the node that was checked.
#pragma once

#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct DeviceFlag {
  std::string host;   // as written, absolute
  std::string box;    // normalised, under /dev; HOST when not given
  std::string perms;  // "rwm" when not given
};

// Splits and checks the syntax (pure): HOST absolute; BOX, when given, an absolute path under
// /dev/ that is none of the box's own nodes (null, zero, full, random, urandom, tty, ptmx, pts,
// shm, fd, stdin, stdout, stderr); PERMS a non-empty set of r, w and m that holds r and w (a
// granted node cannot be limited to reading or writing without a device cgroup, which an
// unprivileged kern has none of; m changes nothing: no box can create device nodes).
Result<DeviceFlag> parse_device_flag(const std::string& value);

// For each --device: the host path resolved (symlinks followed, as the launcher's open will),
// its identity read and checked against the vgpio refusals, and a DeviceGrant with origin
// "--device" appended to spec.devices. A missing node, a directory, a refused node or two
// different nodes at one box path are errors (kind usage or config).
Status add_device_flags(const std::vector<std::string>& values, BoxSpec& spec);

}  // namespace kern::cli
