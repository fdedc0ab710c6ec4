// The rows of kern ps --format; see ps_fields.h.
#include "cli/ps_fields.h"

#include "cli/images_format.h"
#include "cli/ps_table.h"
#include "runtime/sys/log.h"

namespace kern::cli {

const std::vector<TemplateField>& ps_fields() {
  static const std::vector<TemplateField> fields = {
      {"ID", "CONTAINER ID"}, {"Names", "NAMES"},   {"Image", "IMAGE"},       {"Command", "COMMAND"},
      {"Status", "STATUS"},   {"State", "STATE"},   {"Ports", "PORTS"},       {"Labels", "LABELS"},
      {"CreatedAt", "CREATED AT"}, {"RunningFor", "CREATED"}, {"Kind", "KIND"}, {"Pid", "PID"}};
  return fields;
}

nlohmann::ordered_json ps_row(const BoxRecord& b, int64_t now_unix, bool no_trunc) {
  nlohmann::ordered_json j;
  std::string name = log::sanitize(b.name);
  std::string image = b.image.empty() ? "-" : log::sanitize(b.image);
  std::string command = log::sanitize(b.command);
  if (!no_trunc) {
    image = fit_cell(image, kPsImageWidth);
    command = fit_cell(command, kPsCommandWidth);
  }
  // State and Status as docker ps spells them, from what STATUS in kern's table says.
  std::string status = ps_status(b), state, status_text;
  const int64_t up = now_unix - b.started_unix;
  if (record_exited(b)) {
    state = "exited";
    status_text = "Exited (" + std::to_string(b.exit_code) + ") " + human_duration(now_unix - b.exited_unix) + " ago";
  } else if (b.state == "restarting") {
    state = "restarting";
    status_text = "Restarting (" + std::to_string(b.exit_code) + ") " + human_duration(now_unix - b.exited_unix) + " ago";
  } else {
    bool paused = status.rfind("paused", 0) == 0;
    state = paused ? "paused" : "running";
    status_text = "Up " + human_duration(up);
    auto h = nlohmann::json::parse(b.health.empty() ? "null" : b.health, nullptr, false);
    if (h.is_object() && h.contains("status") && h["status"].is_string()) {
      std::string hs = h["status"].get<std::string>();
      status_text += hs == "starting" ? " (health: starting)" : " (" + log::sanitize(hs) + ")";
    }
    if (paused) status_text += " (Paused)";
  }
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const auto& [k, v] : b.labels) labels[log::sanitize(k)] = log::sanitize(v);
  nlohmann::ordered_json ports = nlohmann::ordered_json::array();
  for (const auto& p : b.ports) ports.push_back(log::sanitize(p));
  j["ID"] = name;
  j["Names"] = name;
  j["Image"] = image;
  j["Command"] = command;
  j["Status"] = status_text;
  j["State"] = state;
  j["Ports"] = ports;
  j["Labels"] = labels;
  j["CreatedAt"] = docker_time(b.started_unix);
  j["RunningFor"] = human_duration(up) + " ago";
  j["Kind"] = log::sanitize(b.kind);
  j["Pid"] = record_exited(b) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(b.init_pid);
  return j;
}

}  // namespace kern::cli
