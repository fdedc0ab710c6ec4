// The helpers of one box's network, for whoever owns the box (the foreground launcher, a
// detached box's supervisor): --egress-allow's relay and proxy (egress.h) or --net private's
// pasta (private_net.h). Launcher only.
//
//   net::BoxNetwork network(spec);        // declared before the box: outlives its teardown
//   ctx.before_release = network.before_release();
//   ... BoxHandle::start(plan, ctx) ... box.teardown();
//   network.stop();
#pragma once

#include <functional>
#include <memory>

#include "runtime/box_spec.h"
#include "runtime/net/egress.h"
#include "runtime/net/private_net.h"
#include "runtime/sys/error.h"

namespace kern::net {

class BoxNetwork {
 public:
  explicit BoxNetwork(const BoxSpec& spec) : spec_(spec) {}
  // The StartContext::before_release hook that starts the helpers the spec asks for (empty when
  // it asks for none). A helper that cannot start fails the box's start.
  std::function<Result<void>(int box_pidfd)> before_release();
  // Stops every helper (killed and reaped). Idempotent; the destructor calls it.
  void stop();
  ~BoxNetwork() { stop(); }

 private:
  const BoxSpec& spec_;
  std::unique_ptr<EgressHelpers> egress_;
  std::unique_ptr<PrivateNetwork> private_;
};

}  // namespace kern::net
