// --net private, launcher side: runs pasta (Debian's passt package) for a box whose namespaces
// exist and whose workload has not started yet, so that the box's network namespace gets an
// interface with the host's addresses and routes, outbound access through pasta's sockets (as
// the caller, in the caller's network namespace), and the -p ports published on the host.
// Fails closed: start() returns only once pasta has configured the box's interface and bound
// every published port, or an error (the box then does not start). pasta dies with its owner
// (PR_SET_PDEATHSIG) and is killed and reaped by stop(), so nothing listens on a published port
// after the box; a pasta that ends while the box runs takes the box's network with it (its tap
// device goes), and the caller is told once. Launcher only (the foreground launcher, a detached box's supervisor).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <thread>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::net {

class PrivateNetwork {
 public:
  // `box_pidfd` is box init's, before its release.
  static Result<std::unique_ptr<PrivateNetwork>> start(const BoxSpec& spec, int box_pidfd);
  // Kills pasta and reaps it. Idempotent; the destructor calls it.
  void stop();
  ~PrivateNetwork();
  pid_t pid() const { return pid_; }

 private:
  PrivateNetwork() = default;
  void watch();
  pid_t pid_ = -1;
  int pidfd_ = -1, wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
};

}  // namespace kern::net
