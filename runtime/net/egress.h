// --egress-allow, launcher side: starts the relay and the proxy (egress_helpers.h) for a box
// whose namespaces exist and whose workload has not started yet, watches them, and stops them at
// teardown. Launcher only.
//
//   box ──TCP 127.0.0.1:3128──▶ relay (box's netns) ──unix socket, SCM_RIGHTS──▶ proxy (kern's netns)
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::net {

// The port the relay listens on in the box (its network namespace is fresh, so it is free).
inline constexpr uint16_t kEgressProxyPort = 3128;

// The environment a box with --egress-allow gets: HTTP(S)_PROXY both cases, NO_PROXY.
std::vector<std::string> egress_proxy_env();

class EgressHelpers {
 public:
  // Forks the proxy and the relay, and returns once the relay listens in the box's network
  // namespace (so the workload's first connection finds it). `box_pidfd` is box init's.
  static Result<std::unique_ptr<EgressHelpers>> start(const BoxSpec& spec, int box_pidfd);
  // Kills both helpers and reaps them, without a warning, then gives the connection processes up
  // to kConnectionsGoneMs to write their records. Idempotent; the destructor calls it.
  void stop();
  ~EgressHelpers();

 private:
  EgressHelpers() = default;
  void watch();
  pid_t relay_ = -1, proxy_ = -1;
  int relay_pidfd_ = -1, proxy_pidfd_ = -1, wake_fd_ = -1;
  int connections_gone_ = -1;  // end of file once the proxy and its connection processes are gone
  static constexpr int kConnectionsGoneMs = 1000;
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
};

}  // namespace kern::net
