// The network flags of `kern box`: --net/--network's word, --egress-allow, and --net private's
// -p, --dns and --add-host. Parsed here, turned into BoxSpec fields by build_net().
#pragma once

#include "cli/cli11.h"

#include <optional>
#include <string>
#include <vector>

#include "cli/box_client.h"
#include "cli/flag_filter.h"
#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct NetOptions {
  std::vector<std::string> egress_allow;  // each "a.org,b.com"
  std::vector<std::string> publish, dns, add_host;  // --net private only
};

void add_net_flags(CLI::App* c, NetOptions& o, const FlagFilter& f = FlagFilter());
// --net WORD: none, host (also a bare --net) or private.
Result<NetMode> parse_net_mode(const std::string& word);

// Checks the network flags against the chosen mode (spec.net, already set) and fills
// spec.egress_allow or spec.private_net (the host's /etc/resolv.conf read for its resolvers, pasta
// found on $PATH). The proxy's environment is added by net_env() after the box's env is built.
// `verb`: only "kern box" runs the network helpers (a warm kernel's supervisor does not yet).
Result<void> build_net(const NetOptions& o, BoxSpec& spec, const BoxClient& client);
// An executable `name` along $PATH (as posix_spawnp would find it), or "": how --net private
// finds pasta (and doctor, the same one).
std::string find_on_path(const std::string& name);
// Whether pasta can open /dev/net/tun for this user: "" when it can, else what is wrong (the
// open's errno named). A host without udev leaves the device 0600 root, or makes none.
std::string tun_problem();
// What to do about it, as root.
std::string tun_fix();
// HTTP(S)_PROXY and NO_PROXY for a box with --egress-allow (they win over -e and the image).
void add_net_env(BoxSpec& spec);

}  // namespace kern::cli
