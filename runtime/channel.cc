// The failure-only channel; see channel.h.
#include "runtime/channel.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/sys/fdio.h"

namespace kern {
namespace {
constexpr uint32_t kMagic = 0x6b726e31;  // "krn1"

void copy_bounded(char* dst, size_t cap, const char* src) noexcept {
  size_t n = src ? std::strlen(src) : 0;
  if (n >= cap) n = cap - 1;
  if (n) std::memcpy(dst, src, n);
  dst[n] = '\0';
}
}  // namespace

void send_child_report(int fd, ChildReportType type, ErrorKind kind, int err, const char* what,
                       const char* detail) noexcept {
  ChildReport r;
  std::memset(&r, 0, sizeof r);
  r.magic = kMagic;
  r.type = static_cast<uint32_t>(type);
  r.err = err;
  r.kind = static_cast<int32_t>(kind);
  copy_bounded(r.what, sizeof r.what, what);
  copy_bounded(r.detail, sizeof r.detail, detail);
  (void)sys::write_all_raw(fd, &r, sizeof r);
}

Status read_child_reports(int fd) {
  ChildReport r;
  size_t got = 0;
  for (;;) {
    ssize_t n = ::read(fd, reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read from the box's channel", ErrorKind::internal);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got == sizeof r) break;
  }
  if (got == 0) return {};
  if (got != sizeof r || r.magic != kMagic ||
      (r.type != static_cast<uint32_t>(ChildReportType::setup_failed) &&
       r.type != static_cast<uint32_t>(ChildReportType::exec_failed)) ||
      r.kind < 0 || r.kind > static_cast<int32_t>(ErrorKind::internal))
    return fail(ErrorKind::internal, EPROTO, "malformed message on the box's channel");
  r.what[sizeof r.what - 1] = '\0';
  r.detail[sizeof r.detail - 1] = '\0';
  std::string msg = std::string(r.what);
  if (r.detail[0] != '\0') msg += std::string(" \"") + r.detail + "\"";
  return fail(static_cast<ErrorKind>(r.kind), r.err, msg);
}

}  // namespace kern
