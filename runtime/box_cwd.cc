// The working directory checks; see box_cwd.h. check_box_cwd runs in the launcher (or kern-oci
// before it plans), cwd_inside_root_raw in the box's process between its chdir and its execve.
#include "runtime/box_cwd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <string>
#include <vector>

#include "runtime/sys/log.h"

namespace kern {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    std::string_view c = path.substr(pos, next - pos);
    pos = next + 1;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

Status check_box_cwd(std::string_view path, std::string_view what) {
  auto c = components(path);
  if (c.size() < 2 || c[0] != "proc") return {};
  if (c[1] != "self" && c[1] != "thread-self" && !all_digits(c[1])) return {};
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
