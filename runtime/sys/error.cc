// Formatting of kern::Error: the message the user sees and the hint under it.
#include "runtime/sys/error.h"

#include <cstring>

namespace kern {

std::string_view kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage: return "usage";
    case ErrorKind::config: return "config";
    case ErrorKind::image: return "image";
    case ErrorKind::host_unsupported: return "host-unsupported";
    case ErrorKind::setup: return "setup";
    case ErrorKind::workload: return "workload";
    case ErrorKind::internal: return "internal";
  }
  return "internal";
}

std::string errno_name(int err) {
  // strerrorname_np is glibc >= 2.32; it gives "ENOENT" rather than the prose.
  const char* name = strerrorname_np(err);
  if (name != nullptr) return name;
  return "errno " + std::to_string(err);
}

std::string Error::what() const {
  std::string out;
  for (auto it = context_.rbegin(); it != context_.rend(); ++it) {
    out += *it;
    out += ": ";
  }
  out += message_;
  if (errno_ != 0) {
    out += ": ";
    out += errno_name(errno_);
  }
  return out;
}

std::string Error::hint() const {
  if (!hint_.empty()) return hint_;
  switch (errno_) {
    case ENOSPC:
      if (kind_ == ErrorKind::setup)
        return "the user namespace limit may be reached: check /proc/sys/user/max_user_namespaces";
      break;
    case EPERM:
    case EACCES:
      if (kind_ == ErrorKind::host_unsupported)
        return "unprivileged user namespaces may be disabled: check "
               "/proc/sys/kernel/unprivileged_userns_clone and "
               "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";
      break;
    default:
      break;
  }
  if (kind_ == ErrorKind::usage) return "see 'kern --help' or man kern-box";
  return {};
}

}  // namespace kern
