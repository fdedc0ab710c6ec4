// Thin wrappers over the system calls kern uses. Each retries EINTR, captures errno and names
// the call and the path in its Error. Any process; none of them allocates on success except to
// build an error message, so the child uses the *_raw forms where it must not allocate.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <string>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::sys {

Result<UniqueFd> open_at(int dirfd, const std::string& path, int flags, mode_t mode = 0);
// openat2(2) with RESOLVE_* flags; the path is resolved as the flags say (e.g. RESOLVE_IN_ROOT
// treats dirfd as "/" and never lets ".." or a symlink leave it).
Result<UniqueFd> open_beneath(int dirfd, const std::string& path, int flags, unsigned long long resolve,
                              mode_t mode = 0);
Result<UniqueFd> make_pipe(int flags = O_CLOEXEC, UniqueFd* write_end = nullptr);
// The names in the directory `path` below `dirfd` ("." for dirfd itself), "." and ".." left out,
// sorted; the directory is opened without following a symlink at its last component. Errors
// name `path`.
Result<std::vector<std::string>> sorted_names(int dirfd, const std::string& path);
// Recursively removes `path` below `dirfd` without following symlinks. Missing is fine.
Status remove_tree(int dirfd, const std::string& path);

// The address of a unix socket at `path`; ENAMETOOLONG when it does not fit sun_path.
Result<struct sockaddr_un> unix_address(const std::string& path);

// renameat2(2) with RENAME_EXCHANGE: the two swapped; no_target when `newpath` does not exist
// (ENOENT); unsupported when the file system has no such flag (EINVAL, ENOSYS, EOPNOTSUPP: FUSE 2
// file systems such as sshfs, gocryptfs, bindfs); any other errno is an Error naming `newpath`.
enum class Exchange { swapped, no_target, unsupported };
Result<Exchange> exchange_at(int olddirfd, const std::string& oldpath, int newdirfd, const std::string& newpath);

// "/proc/self/fd/N": a path string for an already-opened fd.
std::string fd_path(int fd);

}  // namespace kern::sys
