// Kernel socket client; see client.h.
#include "runtime/kernel/client.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/kernel/protocol.h"
#include "runtime/kernel/kernel.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::kernel {

Result<UniqueFd> connect_kernel(const std::string& name) {
  if (!valid_box_name(name))
    return fail(ErrorKind::usage, 0, "invalid kernel name \"" + name.substr(0, 80) + "\"");
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  std::string path = kernel_socket_path(rt, name);
  KERN_TRY_ASSIGN(struct sockaddr_un sa, sys::unix_address(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno("socket AF_UNIX");
  if (::connect(fd.get(), reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0) {
    int e = errno;
    if (e == ENOENT)
      return fail(Error(ErrorKind::setup, 0, "no kernel named \"" + name + "\"")
                      .with_hint("start one with: kern kernel start " + name + " --image REF (or --rootfs DIR)"));
    if (e == ECONNREFUSED) {
      ::unlink(path.c_str());
      ::unlink(kernel_log_path(rt, name).c_str());
      return fail(ErrorKind::setup, 0, "kernel \"" + name + "\" is not running (its supervisor is gone)");
    }
    return fail(ErrorKind::setup, e, "connect \"" + path + "\"");
  }
  return fd;
}

Result<nlohmann::json> kernel_request(int fd, const nlohmann::json& request) {
  std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  KERN_TRY(sys::write_all(fd, line, "the kernel's socket"));
  std::string answer;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read the kernel's socket");
    }
    if (n == 0) return fail(ErrorKind::setup, 0, "the kernel closed the connection without an answer");
    const char* nl = static_cast<const char*>(std::memchr(buf, '\n', static_cast<size_t>(n)));
    if (nl) {
      answer.append(buf, static_cast<size_t>(nl - buf));
      break;
    }
    answer.append(buf, static_cast<size_t>(n));
  }
  return parse_answer(answer);
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> out;
  auto rt = paths::runtime_dir();
  if (!rt) return out;
  std::string dir = kernels_dir(*rt);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  std::vector<std::string> logs;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".sock") == 0) out.push_back(n.substr(0, n.size() - 5));
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".log") == 0) logs.push_back(n.substr(0, n.size() - 4));
  }
  ::closedir(d);
  // A log without its socket is a dead kernel's (the socket is bound before the log is made,
  // and removed before it).
  for (const auto& n : logs)
    if (std::find(out.begin(), out.end(), n) == out.end()) ::unlink(kernel_log_path(*rt, n).c_str());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kern::kernel
