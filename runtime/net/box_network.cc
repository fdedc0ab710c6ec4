// A box's network helpers; see box_network.h. Launcher only.
#include "runtime/net/box_network.h"

namespace kern::net {

std::function<Result<void>(int)> BoxNetwork::before_release() {
  if (!spec_.egress_allow.empty())
    return [this](int pidfd) -> Result<void> {
      KERN_TRY_ASSIGN(egress_, EgressHelpers::start(spec_, pidfd));
      return {};
    };
  if (spec_.net == NetMode::private_net)
    return [this](int pidfd) -> Result<void> {
      KERN_TRY_ASSIGN(private_, PrivateNetwork::start(spec_, pidfd));
      return {};
    };
  return {};
}

void BoxNetwork::stop() {
  if (egress_) egress_->stop();
  if (private_) private_->stop();
}

}  // namespace kern::net
