// Bounded, EINTR-safe fd I/O.
#include "runtime/sys/fdio.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace kern::sys {

namespace {

// Calls `put` (write or send) until all of `data` is out, retrying on EINTR and short writes.
template <class Put>
int put_all(Put put, const void* data, size_t len) noexcept {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = put(p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

int write_all_raw(int fd, const void* data, size_t len) noexcept {
  return put_all([fd](const char* p, size_t n) { return ::write(fd, p, n); }, data, len);
}

int send_all_raw(int sock, const void* data, size_t len) noexcept {
  return put_all([sock](const char* p, size_t n) { return ::send(sock, p, n, MSG_NOSIGNAL); }, data, len);
}

Status write_all(int fd, std::string_view data, std::string_view what) {
  int err = write_all_raw(fd, data.data(), data.size());
  if (err != 0) return fail(ErrorKind::setup, err, "write " + std::string(what));
  return {};
}

Status send_all(int sock, std::string_view data, std::string_view what) {
  int err = send_all_raw(sock, data.data(), data.size());
  if (err != 0) return fail(ErrorKind::setup, err, "send " + std::string(what));
  return {};
}

Result<std::string> read_all(int fd, size_t limit, std::string_view what) {
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read " + std::string(what));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit)
      return fail(ErrorKind::setup, EFBIG,
                  "read " + std::string(what) + ": more than " + std::to_string(limit) + " bytes");
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> read_file(int dirfd, const std::string& path, size_t limit) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  UniqueFd owned(fd);
  return read_all(fd, limit, "\"" + path + "\"");
}

Result<std::string> read_regular_file(int dirfd, const std::string& path, size_t limit) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  UniqueFd owned(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail_errno("fstat \"" + path + "\"");
  if (!S_ISREG(st.st_mode)) {
    const char* type = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISCHR(st.st_mode) ? "a character device" : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISBLK(st.st_mode) ? "a block device" : "not a file";
    return fail(ErrorKind::usage, 0, "\"" + path + "\" is " + type + ", not a regular file");
  }
  return read_all(fd, limit, "\"" + path + "\"");
}

Status write_file(int dirfd, const std::string& path, std::string_view data, mode_t mode) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  UniqueFd owned(fd);
  return write_all(fd, data, "\"" + path + "\"");
}

Status write_knob(int dirfd, const std::string& path, std::string_view data) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  UniqueFd owned(fd);
  ssize_t n;
  do n = ::write(fd, data.data(), data.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) return fail_errno("write \"" + path + "\"");
  if (static_cast<size_t>(n) != data.size())
    return fail(ErrorKind::setup, EIO, "short write to \"" + path + "\"");
  return {};
}

}  // namespace kern::sys
