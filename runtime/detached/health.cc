// Health checks' state; see health.h.
#include "runtime/detached/health.h"

#include <nlohmann/json.hpp>

namespace kern {

bool record_probe(HealthState& s, const HealthConfig& c, HealthResult r, uint64_t since_start_ms) {
  const std::string before = s.status;
  if (r.exit_code == 0) {
    s.failing_streak = 0;
    s.status = "healthy";
  } else if (since_start_ms >= c.start_period_ms || s.status != "starting") {
    // A failure in the start period counts only once the box was healthy.
    if (++s.failing_streak >= c.retries) s.status = "unhealthy";
  }
  if (r.output.size() > kHealthOutputMax) r.output.resize(kHealthOutputMax);
  s.log.push_back(std::move(r));
  if (s.log.size() > kHealthLogSize) s.log.erase(s.log.begin());
  return s.status != before;
}

Result<HealthAction> parse_health_action(const std::string& text) {
  if (text == "none") return HealthAction::none;
  if (text == "kill") return HealthAction::kill;
  if (text == "restart") return HealthAction::restart;
  if (text == "stop") return HealthAction::stop;
  return fail(Error(ErrorKind::usage, 0, "--health-on-failure: \"" + text + "\" is not an action")
                  .with_hint("none, kill, restart or stop"));
}

const char* health_action_name(HealthAction a) {
  switch (a) {
    case HealthAction::none: return "none";
    case HealthAction::kill: return "kill";
    case HealthAction::restart: return "restart";
    case HealthAction::stop: return "stop";
  }
  return "none";
}

std::string health_json(const HealthState& s) {
  nlohmann::json log = nlohmann::json::array();
  for (const auto& r : s.log)
    log.push_back({{"start_unix", r.start_unix}, {"exit_code", r.exit_code}, {"output", r.output}});
  nlohmann::json j = {{"status", s.status}, {"failing_streak", s.failing_streak}, {"log", log}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kern
