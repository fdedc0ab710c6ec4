// --sysctl KEY=VALUE, docker run's spelling: a kernel knob of the box's own namespaces, written
// through the box's procfs before /proc/sys is made read-only (runtime/mount_plan.cc). Only the
// knobs a namespace of the box owns, as docker and runc allow: the IPC namespace's (kernel.msg*,
// kernel.sem, kernel.shm*, fs.mqueue.*), the UTS namespace's kernel.domainname, and net.* when
// the box has a network namespace of its own (not --net host). Any other would be the host's.
#pragma once

#include <string>
#include <utility>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// The /proc/sys path and the value of one --sysctl (KEY with dots or slashes), or the refusal.
Result<std::pair<std::string, std::string>> parse_sysctl(const std::string& text, NetMode net);

}  // namespace kern::cli
