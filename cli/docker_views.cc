// Docker's spellings for the --format of inspect, image inspect and events; see docker_views.h.
#include "cli/docker_views.h"

#include "cli/images_format.h"
#include "cli/ps_fields.h"

namespace kern::cli {

nlohmann::ordered_json inspect_view(const BoxRecord& rec, const std::string& kern_json) {
  using json = nlohmann::ordered_json;
  json j = json::parse(kern_json, nullptr, false);
  if (!j.is_object()) j = json::object();
  const bool exited = record_exited(rec);
  const std::string state = ps_row(rec, 0, true)["State"].get<std::string>();
  json health = j.contains("health") ? j["health"] : json(nullptr);
  if (health.is_object() && health.contains("status")) health["Status"] = health["status"];
  j["Id"] = rec.name;
  j["Name"] = rec.name;
  j["Created"] = docker_time(rec.started_unix);
  j["State"] = {{"Status", state},
                {"Running", state == "running" || state == "paused"},
                {"Paused", state == "paused"},
                {"Restarting", state == "restarting"},
                {"Pid", exited ? 0 : rec.init_pid},
                {"ExitCode", exited || rec.state == "restarting" ? rec.exit_code : 0},
                {"StartedAt", docker_time(rec.started_unix)},
                {"FinishedAt", exited ? docker_time(rec.exited_unix) : std::string()},
                {"Health", health}};
  json labels = json::object();
  for (const auto& [k, v] : rec.labels) labels[k] = v;
  j["Config"] = {{"Image", rec.image}, {"Cmd", rec.command}, {"Labels", labels}};
  j["RestartCount"] = rec.restarts;
  j["Ports"] = rec.ports;
  // A detached box's binds and volumes, kept in its record's detail (spec.mounts); a foreground
  // box's record names its volumes only.
  json mounts = json::array();
  if (j.contains("spec") && j["spec"].is_object() && j["spec"].contains("mounts")) mounts = j["spec"]["mounts"];
  else
    for (const auto& v : rec.volumes) mounts.push_back({{"Type", "volume"}, {"Name", v}});
  j["Mounts"] = mounts;
  return j;
}

nlohmann::ordered_json image_inspect_view(const nlohmann::ordered_json& kern_object) {
  using json = nlohmann::ordered_json;
  json j = kern_object;
  auto get = [&j](const char* key) { return j.contains(key) ? j[key] : json(nullptr); };
  json cfg = get("config");
  auto in_cfg = [&cfg](const char* key) { return cfg.is_object() && cfg.contains(key) ? cfg[key] : json(nullptr); };
  json tags = json::array();
  if (j.contains("reference") && j["reference"].is_string()) tags.push_back(j["reference"]);
  j["Id"] = get("config_digest");
  j["RepoTags"] = tags;
  j["Created"] = get("created");
  j["Size"] = get("unpacked_size");
  j["Os"] = get("os");
  j["Architecture"] = get("architecture");
  j["Config"] = {{"Entrypoint", in_cfg("entrypoint")}, {"Cmd", in_cfg("cmd")}, {"Env", in_cfg("env")},
                 {"WorkingDir", in_cfg("working_dir")}, {"User", in_cfg("user")}};
  return j;
}

const std::vector<TemplateField>& event_fields() {
  static const std::vector<TemplateField> fields = {
      {"Type", "TYPE"}, {"Action", "ACTION"}, {"Status", "STATUS"}, {"ID", "ID"},
      {"Actor", "ACTOR"}, {"Time", "TIME"},   {"TimeNano", "TIMENANO"}};
  return fields;
}

nlohmann::ordered_json event_view(const std::string& json_line) {
  using json = nlohmann::ordered_json;
  json e = json::parse(json_line, nullptr, false);
  if (!e.is_object()) return json(nullptr);
  const std::string name = e.value("name", ""), type = e.value("type", "");
  const uint64_t ns = e.value("time_ns", uint64_t{0});
  json attributes = {{"name", name}};
  for (const auto& [k, v] : e.items())
    if (k != "time_ns" && k != "name" && k != "type") attributes[k] = v.is_string() ? v : json(v.dump());
  json j;
  j["Type"] = "box";
  j["Action"] = type;
  j["Status"] = type;
  j["ID"] = name;
  j["Actor"] = {{"ID", name}, {"Attributes", attributes}};
  j["Time"] = ns / 1000000000;
  j["TimeNano"] = ns;
  return j;
}

}  // namespace kern::cli
