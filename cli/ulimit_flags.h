// --ulimit NAME=SOFT[:HARD], docker run's spelling: a resource limit of the box's workload, set
// before its execve (and of kern exec's processes, which take the workload's lockdown).
#pragma once

#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// NAME as docker and ulimit(1) name it (nofile, nproc, core, stack, memlock, ...); a value is a
// number, or -1 / "unlimited" for none; HARD is SOFT when it is left out.
Result<RlimitSetting> parse_ulimit(const std::string& text);

// The limits, checked against the ones kern runs under: raising a hard limit needs
// CAP_SYS_RESOURCE in the host's user namespace, which neither kern nor a box has, so it is
// refused here with the limit there is, instead of failing the box at its start.
Status check_ulimits(const std::vector<RlimitSetting>& limits);

}  // namespace kern::cli
