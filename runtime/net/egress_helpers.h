// The two helper processes of --egress-allow, each a function that never returns:
//   relay  joins the box's user and network namespaces (setns on box init's pidfd), listens on
//          127.0.0.1:PORT there, drops every capability, and hands each accepted connection to
//          the proxy over a unix socket (SCM_RIGHTS). It owns no policy.
//   proxy  stays in kern's own network namespace, receives those connections and forks one
//          process per connection (runtime/net/egress_conn.h), bounded in number.
// Both are forked by the launcher (runtime/net/egress.cc), die with it (PR_SET_PDEATHSIG), and
// end when the other does (the unix socket closes), so the box never has egress without both.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/net/egress_conn.h"

namespace kern::net {

// Relay process. `ready_fd` gets one byte once it listens, or is closed without one.
[[noreturn]] void egress_relay_main(int box_pidfd, uint16_t port, int unix_fd, int ready_fd);

// Proxy process. Records go to `report_fd` (-1: none) as JSON lines.
[[noreturn]] void egress_proxy_main(const EgressPolicy& policy, const std::string& box_name, int unix_fd,
                                    int report_fd);

// The helpers' own hardening: no_new_privs, every capability dropped from every set, and the
// helpers' seccomp allowlist (runtime/net/helper_seccomp.cc). 0 or an errno.
int harden_helper();

}  // namespace kern::net
