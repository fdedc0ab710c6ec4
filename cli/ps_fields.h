// The rows `kern ps --format` renders (cli/go_template.h), with Docker's field names: .ID and
// .Names (a box's name is its id), .Image .Command .Status ("Up 5 minutes", "Exited (1) 3
// seconds ago") .State (running, paused, restarting, exited) .Ports .Labels .CreatedAt
// .RunningFor ("5 minutes ago"), and kern's own .Kind and .Pid. Pure but for .Status and
// .State, which read a paused box's cgroup.freeze.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/go_template.h"
#include "runtime/registry.h"

namespace kern::cli {

const std::vector<TemplateField>& ps_fields();

// Image and Command are cut as in the table unless `no_trunc`.
nlohmann::ordered_json ps_row(const BoxRecord& b, int64_t now_unix, bool no_trunc);

}  // namespace kern::cli
