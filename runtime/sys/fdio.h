// Bounded, EINTR-safe reads and writes on file descriptors. Any process; after clone only the
// functions marked async-signal-safe may be used (they allocate nothing).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::sys {

// Writes all of `data`, retrying on EINTR and short writes. Async-signal-safe.
// Returns 0 or the errno of the failing write.
int write_all_raw(int fd, const void* data, size_t len) noexcept;

Status write_all(int fd, std::string_view data, std::string_view what);

// The same on a socket, with send(MSG_NOSIGNAL): a peer that has gone is EPIPE, never a SIGPIPE
// that kills the caller (a box's supervisor may close its socket the moment the box ends).
// Async-signal-safe.
int send_all_raw(int sock, const void* data, size_t len) noexcept;

Status send_all(int sock, std::string_view data, std::string_view what);

// Reads until EOF or `limit` bytes; more than `limit` is an error (EFBIG) naming `what`.
Result<std::string> read_all(int fd, size_t limit, std::string_view what);

// Reads a whole (small) file. `path` is resolved relative to `dirfd` (AT_FDCWD for cwd).
Result<std::string> read_file(int dirfd, const std::string& path, size_t limit = 1 << 20);
// read_file() of a file the user named, which must be a regular file: opened without blocking
// (a FIFO with no writer would hang the open, a terminal or socket the read) and checked by
// fstat before anything is read; anything else is an error naming its type.
Result<std::string> read_regular_file(int dirfd, const std::string& path, size_t limit = 1 << 20);
// Creates or truncates `path` and writes `data`.
Status write_file(int dirfd, const std::string& path, std::string_view data, mode_t mode = 0644);
// Opens an existing file for writing (no create) and writes `data` in one write(2): how cgroup
// and /proc knobs must be written.
Status write_knob(int dirfd, const std::string& path, std::string_view data);

}  // namespace kern::sys
