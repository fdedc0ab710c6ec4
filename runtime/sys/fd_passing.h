// Handing an open file descriptor to another process over a unix socket (SCM_RIGHTS). Any
// process; send_fd_raw allocates nothing, for the box's side.
#pragma once

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::sys {

// Sends `fd` with one byte of payload; returns 0 or the errno.
int send_fd_raw(int sock, int fd);

// Receives one fd sent by send_fd_raw (close-on-exec on arrival). EOF before it arrives (the
// sender died or closed its end) is an error naming `what`.
Result<UniqueFd> recv_fd(int sock, const char* what);

}  // namespace kern::sys
