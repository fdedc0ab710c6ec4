// Formatting of kern::Error: the message the user sees and the hint under it.
#include "runtime/sys/error.h"

#include <cstring>

namespace kern {

std::string errno_name(int err) {
  // strerrorname_np is glibc >= 2.32; it gives "ENOENT" rather than the prose.
  const char* name = strerrorname_np(err);
  if (name != nullptr) return name;
  return "errno " + std::to_string(err);
}

std::string errno_words(int err) {
  // strerrordesc_np (glibc >= 2.32) is the untranslated text, the same whatever the locale.
  const char* desc = strerrordesc_np(err);
  std::string name = errno_name(err);
  if (desc == nullptr) return name;
  std::string words = desc;
  // "No such file or directory" reads on inside a sentence as "no such file or directory";
  // a leading acronym ("RFS specific error") keeps its case.
  if (words.size() > 1 && words[0] >= 'A' && words[0] <= 'Z' && words[1] >= 'a' && words[1] <= 'z')
    words[0] = static_cast<char>(words[0] - 'A' + 'a');
  return words + " (" + name + ")";
}

std::string Error::what() const {
  std::string out;
  for (auto it = context_.rbegin(); it != context_.rend(); ++it) {
    out += *it;
    out += ": ";
  }
  out += message_;
  if (code_ != 0) {
    out += " (";
    out += code_domain_.empty() ? std::string("code") : code_domain_ + " error";
    out += " ";
    out += std::to_string(code_);
    out += ")";
  }
  if (errno_ != 0) {
    out += ": ";
    out += errno_words(errno_);
  }
  return out;
}

std::string Error::hint() const {
  if (!hint_.empty()) return hint_;
  switch (errno_) {
    // ENOSPC has no hint of its own: a full disk, a full tmpfs and the user namespace limit all
    // give it, and only the place that made the call knows which (clone3 sets its own hint).
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
  // A usage error's hint names the verb it was given to, which only cli/ knows (app.cc).
  return {};
}

}  // namespace kern
