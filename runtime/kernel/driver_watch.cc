// The driver's main thread, from /proc; see driver_watch.h. Supervisor process only.
#include "runtime/kernel/driver_watch.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime/kernel/protocol.h"

namespace kern::kernel {

DriverView classify_driver_syscall(std::string_view text, bool frame_written) {
  // "running", or "NR ARG0 ARG1 ... SP PC", or "-1 SP PC" (blocked, not in a call).
  if (text.substr(0, 7) == "running") return DriverView::between;
  std::string line(text.substr(0, 128));
  char* end = nullptr;
  long nr = std::strtol(line.c_str(), &end, 10);
  if (end == line.c_str() || nr < 0) return DriverView::between;
  unsigned long long arg0 = std::strtoull(end, nullptr, 16);
  switch (nr) {
    case SYS_read:
    case SYS_readv:
    case SYS_pread64:
      if (arg0 != static_cast<unsigned long long>(kDriverCellFd)) return DriverView::inside;
      return frame_written ? DriverView::waiting : DriverView::inside;
    case SYS_futex:
    case SYS_write:
    case SYS_writev:
    case SYS_sendto:
    case SYS_sendmsg:
#ifdef SYS_sendmmsg
    case SYS_sendmmsg:
#endif
      return DriverView::between;
    default:
      return DriverView::inside;
  }
}

Result<DriverWatch> DriverWatch::open(pid_t driver) {
  std::string id = std::to_string(driver);
  std::string path = "/proc/" + id + "/task/" + id + "/syscall";
  DriverWatch w;
  w.fd_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!w.fd_) return fail_errno("open \"" + path + "\"");
  // The file is checked again on every read (ptrace access, e.g. Yama's ptrace_scope): one read
  // now, so that a host where it cannot be read is known before any cell depends on it.
  char buf[256];
  if (::pread(w.fd_.get(), buf, sizeof buf, 0) < 0) return fail_errno("read \"" + path + "\"");
  return w;
}

DriverView DriverWatch::look(bool frame_written) const {
  char buf[256];
  ssize_t n = ::pread(fd_.get(), buf, sizeof buf - 1, 0);
  if (n <= 0) return DriverView::between;
  return classify_driver_syscall(std::string_view(buf, static_cast<size_t>(n)), frame_written);
}

}  // namespace kern::kernel
