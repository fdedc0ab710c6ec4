// The box's typed channel; see channel.h. Encoders and send_* run in the box's processes (no
// allocation: after clone the workload shares box init's memory); the reader in the launcher.
#include "runtime/channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/sys/error_codec.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/fdio.h"

namespace kern {
namespace {

constexpr uint32_t kMagic = 0x6b726e32;  // "krn2"
constexpr size_t kHeader = 8;

size_t frame(char* buf, size_t cap, ChannelMsgType type, size_t payload_len) noexcept {
  if (cap < kHeader + payload_len || payload_len > 0xffff) return 0;
  uint32_t magic = kMagic;
  uint16_t t = static_cast<uint16_t>(type), n = static_cast<uint16_t>(payload_len);
  std::memcpy(buf, &magic, 4);
  std::memcpy(buf + 4, &t, 2);
  std::memcpy(buf + 6, &n, 2);
  return kHeader + payload_len;
}

void send_frame(int fd, const char* buf, size_t len) noexcept {
  if (fd >= 0 && len > 0) (void)sys::write_all_raw(fd, buf, len);
}

Error protocol_error(const std::string& why) {
  return Error(ErrorKind::internal, EPROTO, "malformed message on the box's channel: " + why);
}

}  // namespace

size_t encode_exec_ok(char* buf, size_t cap) noexcept { return frame(buf, cap, ChannelMsgType::exec_ok, 0); }
size_t encode_held(char* buf, size_t cap) noexcept { return frame(buf, cap, ChannelMsgType::held, 0); }
size_t encode_before_pivot(char* buf, size_t cap) noexcept { return frame(buf, cap, ChannelMsgType::before_pivot, 0); }

size_t encode_step_skipped(char* buf, size_t cap, const char* step, int err) noexcept {
  size_t n = step ? std::strlen(step) : 0;
  if (n > 255) n = 255;
  size_t payload = 4 + 1 + n;
  if (cap < kHeader + payload) return 0;
  int32_t e = err;
  uint8_t len = static_cast<uint8_t>(n);
  std::memcpy(buf + kHeader, &e, 4);
  std::memcpy(buf + kHeader + 4, &len, 1);
  if (n) std::memcpy(buf + kHeader + 5, step, n);
  return frame(buf, cap, ChannelMsgType::step_skipped, payload);
}

size_t encode_setup_failed(char* buf, size_t cap, ErrorKind kind, int err, const char* what,
                           const char* detail) noexcept {
  if (cap < kHeader) return 0;
  // `what "detail"` assembled in place, bounded, without allocating.
  char msg[1024];
  size_t m = 0;
  auto put = [&](const char* s) {
    for (; s && *s && m + 1 < sizeof msg; ++s) msg[m++] = *s;
  };
  put(what);
  if (detail && *detail) {
    put(" \"");
    put(detail);
    put("\"");
  }
  size_t body = sys::encode_error_raw(buf + kHeader, cap - kHeader, kind, err, std::string_view(msg, m));
  if (body == 0) return 0;
  return frame(buf, cap, ChannelMsgType::setup_failed, body);
}

size_t encode_workload_status(char* buf, size_t cap, int wait_status) noexcept {
  if (cap < kHeader + 4) return 0;
  int32_t s = wait_status;
  std::memcpy(buf + kHeader, &s, 4);
  return frame(buf, cap, ChannelMsgType::workload_status, 4);
}

void send_exec_ok(int fd) noexcept {
  char buf[kHeader];
  send_frame(fd, buf, encode_exec_ok(buf, sizeof buf));
}

void send_held(int fd) noexcept {
  char buf[kHeader];
  send_frame(fd, buf, encode_held(buf, sizeof buf));
}

void send_before_pivot(int fd) noexcept {
  char buf[kHeader];
  send_frame(fd, buf, encode_before_pivot(buf, sizeof buf));
}

void send_step_skipped(int fd, const char* step, int err) noexcept {
  char buf[kHeader + 4 + 1 + 255];
  send_frame(fd, buf, encode_step_skipped(buf, sizeof buf, step, err));
}

void send_setup_failed(int fd, ErrorKind kind, int err, const char* what, const char* detail) noexcept {
  char buf[kChannelFrameMax];
  send_frame(fd, buf, encode_setup_failed(buf, sizeof buf, kind, err, what, detail));
}

int send_seccomp_listener(int sock, int listener) noexcept {
  char buf[kHeader];
  size_t n = frame(buf, sizeof buf, ChannelMsgType::seccomp_listener, 0);
  return sys::send_with_fd_raw(sock, buf, n, listener);
}

void send_workload_status(int fd, int wait_status) noexcept {
  char buf[kHeader + 4];
  send_frame(fd, buf, encode_workload_status(buf, sizeof buf, wait_status));
}

Result<std::optional<ChannelMsg>> decode_channel_frame(std::string_view b, size_t* consumed) {
  *consumed = 0;
  if (b.size() < kHeader) return std::optional<ChannelMsg>{};
  uint32_t magic;
  uint16_t type, len;
  std::memcpy(&magic, b.data(), 4);
  std::memcpy(&type, b.data() + 4, 2);
  std::memcpy(&len, b.data() + 6, 2);
  if (magic != kMagic) return fail(protocol_error("bad magic"));
  if (len > kChannelFrameMax - kHeader) return fail(protocol_error("frame too long"));
  if (b.size() < kHeader + len) return std::optional<ChannelMsg>{};
  std::string_view p = b.substr(kHeader, len);
  ChannelMsg m;
  switch (static_cast<ChannelMsgType>(type)) {
    case ChannelMsgType::exec_ok:
      if (!p.empty()) return fail(protocol_error("exec_ok with a payload"));
      m.type = ChannelMsgType::exec_ok;
      break;
    case ChannelMsgType::held:
      if (!p.empty()) return fail(protocol_error("held with a payload"));
      m.type = ChannelMsgType::held;
      break;
    case ChannelMsgType::before_pivot:
      if (!p.empty()) return fail(protocol_error("before_pivot with a payload"));
      m.type = ChannelMsgType::before_pivot;
      break;
    case ChannelMsgType::seccomp_listener:
      if (!p.empty()) return fail(protocol_error("seccomp_listener with a payload"));
      m.type = ChannelMsgType::seccomp_listener;
      break;
    case ChannelMsgType::step_skipped: {
      if (p.size() < 5) return fail(protocol_error("short step_skipped"));
      int32_t e;
      std::memcpy(&e, p.data(), 4);
      uint8_t n = static_cast<uint8_t>(p[4]);
      if (p.size() != 5u + n) return fail(protocol_error("step_skipped of the wrong length"));
      m.type = ChannelMsgType::step_skipped;
      m.err = e;
      m.step.assign(p.data() + 5, n);
      break;
    }
    case ChannelMsgType::setup_failed: {
      auto e = sys::decode_error(p);
      if (!e) return fail(protocol_error(e.error().message()));
      m.type = ChannelMsgType::setup_failed;
      m.error = std::move(*e);
      break;
    }
    case ChannelMsgType::workload_status: {
      if (p.size() != 4) return fail(protocol_error("workload_status of the wrong length"));
      int32_t s;
      std::memcpy(&s, p.data(), 4);
      m.type = ChannelMsgType::workload_status;
      m.wait_status = s;
      break;
    }
    default:
      return fail(protocol_error("unknown message type " + std::to_string(type)));
  }
  *consumed = kHeader + len;
  return std::optional<ChannelMsg>(std::move(m));
}

Result<std::optional<ChannelMsg>> ChannelReader::take(bool wait) {
  for (;;) {
    size_t used = 0;
    auto m = decode_channel_frame(buf_, &used);
    if (!m) return fail(std::move(m).error());
    if (m->has_value()) {
      buf_.erase(0, used);
      return m;
    }
    if (eof_) {
      if (!buf_.empty()) return fail(protocol_error("a frame cut short by end-of-file"));
      return std::optional<ChannelMsg>{};
    }
    if (!wait) {
      struct pollfd p = {fd_, POLLIN, 0};
      int r = ::poll(&p, 1, 0);
      if (r == 0) return std::optional<ChannelMsg>{};
      if (r < 0 && errno == EINTR) continue;
    }
    char tmp[kChannelFrameMax];
    ssize_t n = pipe_ ? ::read(fd_, tmp, sizeof tmp) : sys::recv_keeping_fds(fd_, tmp, sizeof tmp, fds_);
    if (n < 0 && !pipe_ && errno == ENOTSOCK) {
      pipe_ = true;
      continue;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return std::optional<ChannelMsg>{};
      return fail_errno("read from the box's channel", ErrorKind::internal);
    }
    if (n == 0) {
      eof_ = true;
      continue;
    }
    buf_.append(tmp, static_cast<size_t>(n));
  }
}

Result<std::optional<ChannelMsg>> ChannelReader::next() { return take(true); }

UniqueFd ChannelReader::take_fd() {
  if (fds_.empty()) return UniqueFd();
  UniqueFd fd = std::move(fds_.front());
  fds_.erase(fds_.begin());
  return fd;
}
Result<std::optional<ChannelMsg>> ChannelReader::poll_next() { return take(false); }

}  // namespace kern
