// The network flags of `kern box` beyond --net: --egress-allow (and the --net private flags,
// refused until that mode exists). Parsed here, turned into BoxSpec fields by build_net().
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct NetOptions {
  std::vector<std::string> egress_allow;  // each "a.org,b.com"
  std::vector<std::string> publish, dns, add_host;  // --net private only
};

void add_net_flags(CLI::App* c, NetOptions& o);

// Checks the network flags against the chosen mode (spec.net, already set) and fills
// spec.egress_allow. The proxy's environment is added by net_env() after the box's env is built.
// `verb`: only "kern box" runs the egress helpers (a warm kernel's supervisor does not yet).
Result<void> build_net(const NetOptions& o, BoxSpec& spec, const std::string& verb);
// HTTP(S)_PROXY and NO_PROXY for a box with --egress-allow (they win over -e and the image).
void add_net_env(BoxSpec& spec);

}  // namespace kern::cli
