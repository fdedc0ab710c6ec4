// --device; see device_flags.h.
#include "cli/device_flags.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "cli/bind_policy.h"
#include "profiles/device_policy.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

Error bad_device(const std::string& value, const std::string& why) {
  return Error(ErrorKind::usage, 0, "--device " + log::quoted(value) + ": " + why);
}

bool perms_like(const std::string& s) {
  return !s.empty() && s.find_first_not_of("rwm") == std::string::npos;
}

}  // namespace

Result<DeviceFlag> parse_device_flag(const std::string& value) {
  std::vector<std::string> f = split_colons(value);
  if (f.size() > 3) return fail(bad_device(value, "expected HOST[:BOX][:PERMISSIONS]"));
  DeviceFlag d;
  d.host = f[0];
  std::string box = f[0];
  d.perms = "rwm";
  // As Docker reads it: a second field of only r, w and m is the permissions.
  if (f.size() == 2 && perms_like(f[1])) d.perms = f[1];
  else if (f.size() >= 2) box = f[1];
  if (f.size() == 3) d.perms = f[2];
  if (d.host.empty() || d.host[0] != '/') return fail(bad_device(value, "the host path " + log::quoted(d.host) + " is not absolute"));
  if (box.empty()) return fail(bad_device(value, "the box path is empty"));
  if (!perms_like(d.perms) || d.perms.size() > 3 ||
      (d.perms.find('r') != d.perms.rfind('r')) || (d.perms.find('w') != d.perms.rfind('w')) ||
      (d.perms.find('m') != d.perms.rfind('m')))
    return fail(bad_device(value, "permissions " + log::quoted(d.perms) + " are not a set of r, w and m"));
  if (d.perms.find('r') == std::string::npos || d.perms.find('w') == std::string::npos)
    return fail(Error(bad_device(value, "permissions " + log::quoted(d.perms) + ": kern cannot limit a granted node to reading "
                                     "or to writing"))
                    .with_hint("that needs a device cgroup, which an unprivileged kern cannot have; the box "
                               "opens the node as its owner and mode on the host allow (give rw or rwm)"));
  KERN_TRY_ASSIGN(d.box, normalize_box_path(box, "--device"));
  if (d.box.rfind("/dev/", 0) != 0)
    return fail(Error(bad_device(value, "the box path " + log::quoted(d.box) + " is not under /dev/"))
                    .with_hint("name the node's place in the box's /dev: --device HOST:/dev/NAME"));
  std::string rest = d.box.substr(5);
  std::string top = rest.substr(0, rest.find('/'));
  for (const char* own : {"null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts", "shm", "fd",
                          "stdin", "stdout", "stderr"})
    if (top == own)
      return fail(bad_device(value, "the box path " + log::quoted(d.box) + " is the box's own /dev/" + own));
  return d;
}

Status add_device_flags(const std::vector<std::string>& values, BoxSpec& spec) {
  for (const auto& v : values) {
    KERN_TRY_ASSIGN(DeviceFlag d, parse_device_flag(v));
    // The launcher reopens the node by a path without symlinks: the canonical one.
    char buf[PATH_MAX];
    if (::realpath(d.host.c_str(), buf) == nullptr)
      return fail(Error(ErrorKind::usage, errno, "--device " + log::quoted(d.host)));
    std::string host = buf;
    profiles::DeviceIdentity id = profiles::inspect_device(host);
    if (!id.exists) return fail(Error(ErrorKind::usage, id.err, "--device " + log::quoted(d.host)));
    struct stat st;
    if (::stat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return fail(Error(bad_device(v, "a directory, not a device node"))
                      .with_hint("name each node: --device /dev/DIR/NODE"));
    if (auto why = profiles::refusal_reason(id))
      return fail(Error(ErrorKind::config, 0, "--device " + log::quoted(d.host) + " (" + profiles::describe_identity(id) +
                                                  ") is refused: " + *why));
    uint64_t rdev = static_cast<uint64_t>(::makedev(id.major, id.minor));
    bool dup = false;
    for (const auto& g : spec.devices) {
      if (g.box_path != d.box) continue;
      if (g.rdev != rdev)
        return fail(bad_device(v, "another node is granted at " + log::quoted(d.box) + " already (" + g.origin + ")"));
      dup = true;
    }
    if (dup) continue;
    DeviceGrant g;
    g.host_path = host;
    g.box_path = d.box;
    g.origin = "--device";
    g.rdev = rdev;
    spec.devices.push_back(std::move(g));
  }
  return {};
}

}  // namespace kern::cli
