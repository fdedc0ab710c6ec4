// io.max (cgroup v2 blk-throttle) as kern writes and reads it: one line per block device,
// "MAJ:MIN rbps=N wbps=N riops=N wiops=N", where a key left out of a write keeps its value and
// "max" means not capped. Pure; the file itself is written and read by box_cgroup.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/cgroup/enforcement.h"

namespace kern {

// The text written to io.max for one device: only the keys that are capped.
std::string io_max_line(const IoThrottle& t);

// io.max as read back against the request: enforced when every requested device's line holds
// each requested cap exactly; not_enforced when a device or a cap is missing (or "max") or the
// file is absent; undetermined when it could not be read (nullopt) or a line does not parse.
Verdict io_max_verdict(const std::vector<IoThrottle>& requested, std::optional<std::string_view> text);

}  // namespace kern
