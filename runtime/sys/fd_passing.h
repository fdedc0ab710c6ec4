// Handing an open file descriptor to another process over a unix socket (SCM_RIGHTS). Any
// process; send_fd_raw allocates nothing, for the box's side.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::sys {

// Sends `fd` with one byte of payload; returns 0 or the errno.
int send_fd_raw(int sock, int fd);

// Sends `len` bytes of `data` (one sendmsg, so the fd travels with its first byte) and `fd`;
// returns 0 or the errno (EIO when fewer bytes went). No allocation.
int send_with_fd_raw(int sock, const void* data, size_t len, int fd);

// One recvmsg of up to `cap` bytes; every descriptor that came with them is appended to `fds`
// (close-on-exec). Returns the byte count (0 at end-of-file) or -1 with errno set.
ssize_t recv_keeping_fds(int sock, void* buf, size_t cap, std::vector<UniqueFd>& fds);

// Receives one fd sent by send_fd_raw (close-on-exec on arrival). EOF before it arrives (the
// sender died or closed its end) is an error naming `what`.
Result<UniqueFd> recv_fd(int sock, const char* what);

}  // namespace kern::sys
