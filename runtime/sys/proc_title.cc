// Scrubbing the argument and environment areas; see proc_title.h.
#include "runtime/sys/proc_title.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kern::sys {
namespace {

// Fields 48..51 of /proc/self/stat: arg_start arg_end env_start env_end (since Linux 3.5).
bool read_areas(uintptr_t out[4]) noexcept {
  char buf[2048];
  int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
  if (p == nullptr) return false;
  ++p;
  int field = 2;
  int got = 0;
  while (*p && got < 4) {
    while (*p == ' ') ++p;
    if (!*p) break;
    ++field;
    uintptr_t v = 0;
    const char* start = p;
    while (*p >= '0' && *p <= '9') v = v * 10 + static_cast<uintptr_t>(*p++ - '0');
    while (*p && *p != ' ') ++p;
    if (field >= 48 && field <= 51) {
      if (p == start) return false;
      out[got++] = v;
    }
  }
  return got == 4;
}

}  // namespace

int scrub_process_title(const char* title) noexcept {
  uintptr_t a[4];
  if (!read_areas(a)) return errno != 0 ? errno : EINVAL;
  if (a[1] <= a[0] || a[3] < a[2]) return EINVAL;
  char* args = reinterpret_cast<char*>(a[0]);
  size_t args_len = a[1] - a[0];
  std::memset(args, 0, args_len);
  size_t t = std::strlen(title);
  if (t >= args_len) t = args_len - 1;
  std::memcpy(args, title, t);
  if (a[3] > a[2]) std::memset(reinterpret_cast<char*>(a[2]), 0, a[3] - a[2]);
  return 0;
}

}  // namespace kern::sys
