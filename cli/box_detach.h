// `kern box -d`, `--rm`, `--log-size`, `--restart`: the detached form of `kern box` (see
// man/kern-box.1).
#pragma once

#include "cli/cli11.h"

#include <string>

#include "cli/box_options.h"
#include "cli/flag_filter.h"
#include "oci/image_resolver.h"
#include "runtime/detached/health.h"
#include "runtime/detached/restart_policy.h"
#include "runtime/sys/error.h"
#include "runtime/timing.h"

namespace kern::cli {

struct DetachFlags {
  bool detach = false;
  bool auto_remove = false;
  std::string log_size;  // "" = the default
  std::string restart;   // --restart POLICY ("" = not given)
  unsigned restart_max = 0;  // --restart-max N (0 = not given)
  // Health checks ("" / -1 = not given).
  std::string health_cmd, health_interval, health_timeout, health_start_period, health_on_failure;
  int health_retries = -1;
  bool no_healthcheck = false;
};

void add_detach_flags(CLI::App* cmd, DetachFlags& d, const FlagFilter& f = FlagFilter());
// Refuses --log-size and --restart without -d (a foreground box has no log and no supervisor to
// restart it), --restart with --rm (as Docker); --rm alone is accepted (a foreground box never
// outlives its command anyway).
Status check_detach_flags(const DetachFlags& f);
// --restart and --restart-max as one policy (the smaller limit of on-failure:N and --restart-max).
Result<RestartPolicy> restart_policy_of(const DetachFlags& f);
// The health check: the image's Healthcheck, each --health-* flag over it, none with
// --no-healthcheck (or an image's ["NONE"]).
Result<HealthConfig> health_config_of(const DetachFlags& f, const std::optional<oci::ImageHealthcheck>& image);
// Runs `kern box -d`: names the box when the command line did not, builds the spec, starts the
// box's supervisor and prints the name once the workload runs.
Result<int> run_detached_box(BoxOptions options, const DetachFlags& f, TimingPage* timing);

}  // namespace kern::cli
