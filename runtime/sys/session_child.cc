// A supervisor forked into a session of its own; see session_child.h.
#include "runtime/sys/session_child.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/sys/error_codec.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::sys {

void say_failed(int ready_fd, const Error& e) {
  std::string m = "F" + encode_error(e);
  (void)!::write(ready_fd, m.data(), m.size());
}

Status start_session_child(const std::function<void(int ready_fd)>& body, const std::string& ended) {
  UniqueFd ready_w;
  KERN_TRY_ASSIGN(UniqueFd ready_r, make_pipe(O_CLOEXEC, &ready_w));
  pid_t mid = ::fork();
  if (mid < 0) return fail_errno("fork (" + ended + ")");
  if (mid == 0) {
    ready_r.reset();
    ::setsid();
    pid_t sup = ::fork();
    if (sup != 0) _exit(sup < 0 ? 1 : 0);
    body(ready_w.get());
    _exit(1);
  }
  ready_w.reset();
  while (::waitpid(mid, nullptr, 0) < 0 && errno == EINTR) {
  }
  auto text = read_all(ready_r.get(), 1 << 16, "a supervisor's ready pipe");
  if (!text) return fail(std::move(text).error());
  if (*text == "R") return {};
  if (!text->empty() && (*text)[0] == 'F') {
    auto e = decode_error(std::string_view(*text).substr(1));
    if (e) return fail(std::move(*e));
    return fail(std::move(e).error().with_context(ended));
  }
  return fail(ErrorKind::setup, 0, ended);
}

}  // namespace kern::sys
