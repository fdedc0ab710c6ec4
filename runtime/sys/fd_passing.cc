#include "runtime/sys/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace kern::sys {

int send_fd_raw(int sock, int fd) {
  char byte = 'F';
  struct iovec iov = {&byte, 1};
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
  return n == 1 ? 0 : (n < 0 ? errno : EIO);
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
