// --restart's policy; see restart_policy.h.
#include "runtime/detached/restart_policy.h"

#include <cstdlib>

namespace kern {

Result<RestartPolicy> parse_restart_policy(const std::string& text) {
  RestartPolicy p;
  std::string mode = text, count;
  if (size_t colon = text.find(':'); colon != std::string::npos) {
    mode = text.substr(0, colon);
    count = text.substr(colon + 1);
  }
  if (mode == "no") p.mode = RestartMode::no;
  else if (mode == "on-failure") p.mode = RestartMode::on_failure;
  else if (mode == "always") p.mode = RestartMode::always;
  else if (mode == "unless-stopped") p.mode = RestartMode::unless_stopped;
  else
    return fail(Error(ErrorKind::usage, 0, "--restart: \"" + text + "\" is not a restart policy")
                    .with_hint("no, on-failure[:N], always or unless-stopped"));
  if (text.find(':') != std::string::npos) {
    char* end = nullptr;
    unsigned long n = std::strtoul(count.c_str(), &end, 10);
    if (p.mode != RestartMode::on_failure)
      return fail(Error(ErrorKind::usage, 0, "--restart: only on-failure takes a count (\"" + text + "\")")
                      .with_hint("--restart " + mode + " --restart-max N limits the restarts"));
    if (count.empty() || end == nullptr || *end != '\0' || n < 1 || n > 1000000)
      return fail(Error(ErrorKind::usage, 0, "--restart: \"" + count + "\" is not a count of restarts")
                      .with_hint("on-failure:N with N from 1"));
    p.max_restarts = static_cast<unsigned>(n);
  }
  return p;
}

std::string restart_policy_name(const RestartPolicy& p) {
  switch (p.mode) {
    case RestartMode::no: return "no";
    case RestartMode::on_failure:
      return p.max_restarts ? "on-failure:" + std::to_string(p.max_restarts) : "on-failure";
    case RestartMode::always: return "always";
    case RestartMode::unless_stopped: return "unless-stopped";
  }
  return "no";
}

bool restart_wanted(const RestartPolicy& p, int exit_code, unsigned restarts, bool stop_requested) {
  if (stop_requested || p.mode == RestartMode::no) return false;
  if (p.max_restarts != 0 && restarts >= p.max_restarts) return false;
  if (p.mode == RestartMode::on_failure) return exit_code != 0;
  return true;
}

uint64_t restart_delay_ms(unsigned quick_exits) {
  uint64_t d = 100;
  for (unsigned i = 1; i < quick_exits && d < kRestartMaxDelayMs; ++i) d *= 2;
  return d < kRestartMaxDelayMs ? d : kRestartMaxDelayMs;
}

}  // namespace kern
