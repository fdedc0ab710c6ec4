// See seccomp_agent.h.
#include "runtime/bundle/seccomp_agent.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/bundle/state.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

std::string seccomp_agent_state(const Seccomp& s, pid_t pid, const std::string& container_state_json) {
  nlohmann::json doc = {{"ociVersion", kOciVersion},
                        {"fds", {"seccompFd"}},
                        {"pid", pid},
                        {"metadata", s.listener_metadata},
                        {"state", nlohmann::json::parse(container_state_json)}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status send_to_seccomp_agent(const Seccomp& s, pid_t pid, const std::string& container_state_json, int listener) {
  const std::string what = "the seccomp agent at \"" + s.listener_path + "\" (linux.seccomp.listenerPath)";
  sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  if (s.listener_path.empty() || s.listener_path.size() >= sizeof addr.sun_path)
    return fail(ErrorKind::config, 0, "cannot reach " + what + ": not a unix socket path");
  std::memcpy(addr.sun_path, s.listener_path.data(), s.listener_path.size());
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return fail_errno("socket (" + what + ")");
  int r;
  do r = ::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  while (r != 0 && errno == EINTR);
  if (r != 0) return fail_errno("connect to " + what);
  std::string doc = seccomp_agent_state(s, pid, container_state_json);
  int e = sys::send_with_fd_raw(sock.get(), doc.data(), doc.size(), listener);
  if (e != 0) return fail(Error(ErrorKind::setup, e, "sendmsg to " + what));
  return {};
}

}  // namespace kern::bundle
