// The working directory checks; see box_cwd.h. check_box_cwd runs in the launcher (or kern-oci
// before it plans), cwd_inside_root_raw in the box's process between its chdir and its execve.
#include "runtime/box_cwd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <string>
#include <utility>

#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern {
namespace {

// The first two components of the path as the box's process reads it.
std::pair<std::string, std::string> first_two(std::string_view path) {
  std::string clean = paths::clean_absolute_path(path);
  size_t second = clean.find('/', 1);
  if (second == std::string::npos) return {clean.substr(1), ""};
  size_t end = clean.find('/', second + 1);
  return {clean.substr(1, second - 1), clean.substr(second + 1, end == std::string::npos ? end : end - second - 1)};
}

}  // namespace

Status check_box_cwd(std::string_view path, std::string_view what) {
  auto [top, next] = first_two(path);
  if (top != "proc" || next.empty()) return {};
  bool pid = next.find_first_not_of("0123456789") == std::string::npos;
  if (next != "self" && next != "thread-self" && !pid) return {};
  return fail(std::move(Error(ErrorKind::config, 0,
                              std::string(what) + ": refusing the working directory " + log::quoted(path) +
                                  ": it is inside a process's own /proc directory, whose links lead to what "
                                  "that process has open, outside the box's root"))
                  .with_hint("give a directory of the box's own file system"));
}

int cwd_inside_root_raw() {
  // The kernel's getcwd: a directory not reachable from the process's root is answered with a
  // path that does not start with "/" ("(unreachable)/..."), or ENOENT; PATH_MAX is the most
  // it ever returns.
  char buf[PATH_MAX];
  long n = ::syscall(SYS_getcwd, buf, sizeof buf);
  if (n < 0) return errno == ENOENT ? EXDEV : errno;
  if (n == 0 || buf[0] != '/') return EXDEV;
  return 0;
}

}  // namespace kern
