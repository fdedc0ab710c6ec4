// Thin system call wrappers; see syscall.h.
#include "runtime/sys/syscall.h"

#include <dirent.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kern::sys {

namespace {
std::string q(const std::string& s) { return "\"" + s + "\""; }
}  // namespace

Result<struct sockaddr_un> unix_address(const std::string& path) {
  struct sockaddr_un sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path)
    return fail(ErrorKind::setup, ENAMETOOLONG, "socket path " + q(path));
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  return sa;
}

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

Result<Exchange> exchange_at(int olddirfd, const std::string& oldpath, int newdirfd, const std::string& newpath) {
  int r;
  do r = ::renameat2(olddirfd, oldpath.c_str(), newdirfd, newpath.c_str(), RENAME_EXCHANGE);
  while (r != 0 && errno == EINTR);
  if (r == 0) return Exchange::swapped;
  if (errno == ENOENT) return Exchange::no_target;
  if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) return Exchange::unsupported;
  return fail_errno("renameat2 RENAME_EXCHANGE " + q(newpath));
}

Result<UniqueFd> open_at(int dirfd, const std::string& path, int flags, mode_t mode) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), flags | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("openat " + q(path));
  return UniqueFd(fd);
}

Result<UniqueFd> open_beneath(int dirfd, const std::string& path, int flags,
                              unsigned long long resolve, mode_t mode) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = resolve;
  long fd;
  do fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("openat2 " + q(path));
  return UniqueFd(static_cast<int>(fd));
}

Result<UniqueFd> make_pipe(int flags, UniqueFd* write_end) {
  int fds[2];
  if (::pipe2(fds, flags) != 0) return fail_errno("pipe2");
  if (write_end) *write_end = UniqueFd(fds[1]);
  else ::close(fds[1]);
  return UniqueFd(fds[0]);
}

Result<std::vector<std::string>> sorted_names(int dirfd, const std::string& path) {
  int fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail_errno("open " + q(path));
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return fail_errno("fdopendir " + q(path));
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    errno = 0;
  }
  int err = errno;
  ::closedir(d);
  if (err) return fail(Error(ErrorKind::setup, err, "readdir " + q(path)));
  std::sort(names.begin(), names.end());
  return names;
}

Status remove_tree(int dirfd, const std::string& path) {
  struct stat st;
  if (::fstatat(dirfd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return fail_errno("fstatat " + q(path));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dirfd, path.c_str(), 0) != 0 && errno != ENOENT)
      return fail_errno("unlinkat " + q(path));
    return {};
  }
  int fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES && st.st_uid == ::geteuid()) {
    // A directory of ours without read permission (overlayfs makes its work dir mode 0): opened
    // up, it is checked again to be the directory stat saw.
    if (::fchmodat(dirfd, path.c_str(), 0700, 0) == 0)
      fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat again;
    if (fd >= 0 && (::fstat(fd, &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev)) {
      ::close(fd);
      errno = EXDEV;
      fd = -1;
    }
  }
  if (fd < 0) return fail_errno("openat " + q(path));
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return fail_errno("fdopendir " + q(path));
  }
  // A directory without write or search permission for us (a layer that said 0555) is opened up
  // first so that its entries can be unlinked.
  (void)::fchmod(fd, 0700);
  Status result;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    Status st2 = remove_tree(::dirfd(d), e->d_name);
    if (!st2 && result) result = std::move(st2);
  }
  ::closedir(d);
  if (!result) return result;
  if (::unlinkat(dirfd, path.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return fail_errno("rmdir " + q(path));
  return {};
}

}  // namespace kern::sys
