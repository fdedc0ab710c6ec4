// The health probes of a detached box, as its supervisor runs them (health.h has the rules): one
// at a time, every interval from the box's start, each `kern exec NAME -- TEST...` (the box's own
// lockdown, as any kern exec), killed when it outlives the timeout. Supervisor side only; the
// supervisor's loop polls fds() and calls on_ready().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/detached/health.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

class HealthProbe {
 public:
  // `kern_exe`: this kern binary (its /proc/self/exe, read at the supervisor's start).
  HealthProbe(HealthConfig config, std::string box_name, std::string kern_exe);
  // kern rename: the probes' kern exec names the box by its new name.
  void rename(std::string box_name) { name_ = std::move(box_name); }
  ~HealthProbe();
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  const HealthConfig& config() const { return config_; }
  const HealthState& state() const { return state_; }
  // A new box runs: the status starts again ("starting"), the first probe after one interval.
  void box_started();
  // The box is gone: no probe runs until the next box_started().
  void box_gone();
  // The descriptors to poll for reading (-1 entries when unused): the timer, the running probe's
  // output and its pidfd.
  std::vector<int> fds() const;
  // Called when any of fds() is ready; returns true when the status changed.
  bool on_ready();

 private:
  void start_probe();
  bool finish_probe(bool timed_out);
  void drain_output();

  HealthConfig config_;
  std::string name_, exe_;
  HealthState state_;
  UniqueFd timer_;
  pid_t probe_ = -1;
  UniqueFd probe_pidfd_, probe_out_;
  std::string output_;
  int64_t probe_start_unix_ = 0;
  uint64_t box_start_ns_ = 0;
  bool running_box_ = false;
};

}  // namespace kern
