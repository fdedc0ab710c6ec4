// One connection through the egress proxy: runs in a process of its own, forked by the proxy
// (runtime/net/egress_proxy.cc) for each connection the relay hands over. Reads the request head,
// decides (egress_rules.h, http_head.h, tls_sni.h), resolves and connects, then copies bytes both
// ways until both ends close or the connection is idle too long. One report record at the end.
#pragma once

#include <string>
#include <vector>

#include "runtime/report.h"

namespace kern::net {

struct EgressLimits {
  unsigned head_timeout_ms = 10000;   // to send the request head (and the ClientHello)
  unsigned connect_timeout_ms = 10000;
  unsigned idle_timeout_ms = 60000;   // no byte either way for this long ends a tunnel
  unsigned max_connections = 64;      // at once, per box
};

struct EgressPolicy {
  std::vector<std::string> allow;  // canonical domains
  EgressLimits limits;
};

// Serves the box's connection `client` (a TCP socket of the box's network namespace) and returns
// the decision and byte counts. Proxy connection process only.
EgressEvent serve_egress_connection(int client, const EgressPolicy& policy);

// A connection process ends with the proxy: once the proxy is gone (the box ended, or it was
// killed) the process gets SIGTERM, its copy loop ends with the reason "the egress proxy ended"
// and its record is still written. Called first thing in the connection process.
void end_connection_with_proxy();

}  // namespace kern::net
