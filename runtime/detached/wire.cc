// The detached box's socket framing; see wire.h. Both sides.
#include "runtime/detached/wire.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "runtime/registry.h"
#include "runtime/sys/syscall.h"

namespace kern {

uint64_t wall_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string encode_frame(WireType type, uint64_t time_ns, std::string_view payload, uint64_t seq) {
  std::string f(kWireHeader, '\0');
  f[0] = static_cast<char>(type);
  uint32_t len = static_cast<uint32_t>(payload.size());
  std::memcpy(f.data() + 4, &len, 4);
  std::memcpy(f.data() + 8, &time_ns, 8);
  std::memcpy(f.data() + 16, &seq, 8);
  f.append(payload);
  return f;
}

Result<std::optional<WireFrame>> take_frame(std::string& buf) {
  if (buf.size() < kWireHeader) return std::optional<WireFrame>{};
  uint8_t type = static_cast<uint8_t>(buf[0]);
  if (type < 1 || type > 5 || buf[1] || buf[2] || buf[3])
    return fail(ErrorKind::internal, EPROTO, "unknown frame from the box's supervisor");
  uint32_t len;
  std::memcpy(&len, buf.data() + 4, 4);
  if (len > kWireMaxPayload) return fail(ErrorKind::internal, EPROTO, "oversized frame from the box's supervisor");
  if (buf.size() < kWireHeader + len) return std::optional<WireFrame>{};
  WireFrame f;
  f.type = static_cast<WireType>(type);
  std::memcpy(&f.time_ns, buf.data() + 8, 8);
  std::memcpy(&f.seq, buf.data() + 16, 8);
  f.payload = buf.substr(kWireHeader, len);
  buf.erase(0, kWireHeader + len);
  return std::optional<WireFrame>(std::move(f));
}

Result<UniqueFd> connect_box(const std::string& runtime_dir, const std::string& name) {
  std::string path = detached_socket_path(runtime_dir, name);
  KERN_TRY_ASSIGN(struct sockaddr_un sa, sys::unix_address(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno("socket AF_UNIX");
  if (::connect(fd.get(), reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0)
    return fail(ErrorKind::setup, errno, "connect \"" + path + "\"");
  return fd;
}

Result<std::optional<WireFrame>> read_frame(int fd, std::string& buf) {
  for (;;) {
    KERN_TRY_ASSIGN(std::optional<WireFrame> f, take_frame(buf));
    if (f) return f;
    char tmp[65536];
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read from the box's supervisor");
    if (n == 0) return std::optional<WireFrame>{};
    buf.append(tmp, static_cast<size_t>(n));
  }
}

}  // namespace kern
