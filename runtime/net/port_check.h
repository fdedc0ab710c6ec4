// --net private's -p ports, checked free on every address they are asked for before pasta
// binds them. pasta keeps a port bound on one family when the other is taken (a dual-stack
// bind that fails, then an IPv6 socket that succeeds), so that with 127.0.0.1:PORT held by
// another service `-p PORT:...` would listen on [::]:PORT only and a client of 127.0.0.1:PORT
// would reach that other service. A port that cannot be had on every asked address fails the
// box's start instead, as podman refuses it. Launcher side.
#pragma once

#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::net {

// Binds each published port as pasta will (every address: one dual-stack IPv6 socket, or IPv4
// alone where the kernel has no IPv6; a given address: that one) and closes it again. An error
// names the -p value, the address that could not be bound and the errno.
Status check_ports_free(const std::vector<PortPublish>& list);

// Gives each entry whose host port is 0 (-p BOXPORT) a free port of the host, the kernel's choice
// on the address pasta will bind, distinct from every other entry's. Said by kern port and
// kern ps; another process may take it before pasta binds it (check_ports_free then fails the
// start), as with podman's choice.
Status assign_host_ports(std::vector<PortPublish>& list);

}  // namespace kern::net
