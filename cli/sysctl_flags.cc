// --sysctl; see sysctl_flags.h.
#include "cli/sysctl_flags.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

constexpr std::array<std::string_view, 8> kIpcKnobs = {"kernel.msgmax", "kernel.msgmnb",  "kernel.msgmni",
                                                       "kernel.sem",    "kernel.shmall",  "kernel.shmmax",
                                                       "kernel.shmmni", "kernel.shm_rmid_forced"};

Error sysctl_error(const std::string& text, const std::string& why, const std::string& hint) {
  return Error(ErrorKind::usage, 0, "--sysctl \"" + log::sanitize(text) + "\": " + why).with_hint(hint);
}

}  // namespace

Result<std::pair<std::string, std::string>> parse_sysctl(const std::string& text, NetMode net) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return fail(sysctl_error(text, "not KEY=VALUE", "--sysctl net.ipv4.ip_unprivileged_port_start=80"));
  std::string key = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  // net.ipv4.conf.eth0/1.rp_filter style keys name an interface with a dot by a slash: keys with
  // slashes are taken as paths.
  if (key.find('/') == std::string::npos) std::replace(key.begin(), key.end(), '.', '/');
  if (key.find("..") != std::string::npos || key.find("//") != std::string::npos || key.front() == '/' ||
      key.back() == '/' || key.find("/./") != std::string::npos || key.find("./") == 0)
    return fail(sysctl_error(text, "not a knob's name", "--sysctl kernel.shm_rmid_forced=1"));
  std::string dotted = key;
  std::replace(dotted.begin(), dotted.end(), '/', '.');
  bool ipc = std::find(kIpcKnobs.begin(), kIpcKnobs.end(), dotted) != kIpcKnobs.end() || dotted.rfind("fs.mqueue.", 0) == 0;
  bool uts = dotted == "kernel.domainname";
  bool netns = dotted.rfind("net.", 0) == 0;
  if (netns && net == NetMode::host)
    return fail(sysctl_error(text, "the box shares the host's network (--net host): this knob is the host's",
                             "leave out --net host (the box then has a network namespace of its own)"));
  if (dotted == "kernel.hostname")
    return fail(sysctl_error(text, "the box's hostname is set with --hostname", "--hostname NAME"));
  if (!ipc && !uts && !netns)
    return fail(sysctl_error(text, "not a knob of the box's own namespaces: it would be the host's",
                             "namespaced knobs: net.*, kernel.msg*, kernel.sem, kernel.shm*, fs.mqueue.*, "
                             "kernel.domainname"));
  if (value.find('\n') != std::string::npos || value.find('\0') != std::string::npos)
    return fail(sysctl_error(text, "the value has a newline or a NUL byte", "one line"));
  return std::make_pair("/proc/sys/" + key, value);
}

}  // namespace kern::cli
