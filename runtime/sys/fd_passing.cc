#include "runtime/sys/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace kern::sys {

int send_fd_raw(int sock, int fd) {
  char byte = 'F';
  return send_with_fd_raw(sock, &byte, 1, fd);
}

int send_with_fd_raw(int sock, const void* data, size_t len, int fd) {
  struct iovec iov = {const_cast<void*>(data), len};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  std::memset(ctl, 0, sizeof ctl);
  struct msghdr mh {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do n = ::sendmsg(sock, &mh, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(len) ? 0 : (n < 0 ? errno : EIO);
}

ssize_t recv_keeping_fds(int sock, void* buf, size_t cap, std::vector<UniqueFd>& fds) {
  struct iovec iov = {buf, cap};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(4 * sizeof(int))];
  struct msghdr mh {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  ssize_t n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  if (n < 0) return -1;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.emplace_back(fd);
    }
  }
  return n;
}

Result<UniqueFd> recv_fd(int sock, const char* what) {
  char byte = 0;
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  struct msghdr mh {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  ssize_t n;
  do n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return fail_errno(std::string("recvmsg (") + what + ")");
  int fd = -1;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  if (fd < 0) return fail(ErrorKind::setup, EPROTO, std::string("no descriptor arrived (") + what + ")");
  return UniqueFd(fd);
}

}  // namespace kern::sys
