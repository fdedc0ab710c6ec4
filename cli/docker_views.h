// The objects the --format templates of kern inspect, kern image inspect and kern events see
// (cli/go_template.h): kern's own JSON with Docker's spellings added beside it, so that what
// people type at docker works ({{.State.Pid}}, {{.Config.Labels}}, {{.Actor.Attributes.name}})
// and kern's keys stay reachable ({{.pids.init}}). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/go_template.h"
#include "runtime/registry.h"

namespace kern::cli {

// kern inspect's object of `rec` (`kern_json`, inspect_json's text) plus .Id .Name .Created
// .State{Status Running Paused Restarting Pid ExitCode StartedAt FinishedAt Health}
// .Config{Image Cmd Labels} .RestartCount .Ports.
nlohmann::ordered_json inspect_view(const BoxRecord& rec, const std::string& kern_json);

// kern image inspect's object plus .Id .RepoTags .Created .Size .Os .Architecture
// .Config{Entrypoint Cmd Env WorkingDir User}.
nlohmann::ordered_json image_inspect_view(const nlohmann::ordered_json& kern_object);

// An events.jsonl line as docker events' object: .Type (box) .Action and .Status (start, die,
// ...) .ID (the box's name) .Actor{ID Attributes{name and the event's other keys}} .Time
// .TimeNano. Null for a line that is not an object.
nlohmann::ordered_json event_view(const std::string& json_line);
const std::vector<TemplateField>& event_fields();

}  // namespace kern::cli
