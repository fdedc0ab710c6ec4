// BoxClient: who starts a box (kern box, a warm kernel) and which flags beyond the common ones its
// launch carries out.
#pragma once

#include <string>

namespace kern::cli {

// Who starts a box, and what its launch can do: the flags a client takes beyond the common ones
// are the client's property (its man page says which), never a comparison of command names.
struct BoxClient {
  std::string name;          // "kern box", "kern kernel start": for messages
  bool own_network = false;  // --net private and --egress-allow: its launch starts their helpers
};
// kern box, in the foreground and detached.
inline const BoxClient kBoxClient{"kern box", true};

}  // namespace kern::cli
