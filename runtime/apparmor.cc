// See apparmor.h.
#include "runtime/apparmor.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>

#include "runtime/sys/procfs.h"

namespace kern {

namespace {

// "NAME (MODE)" lines of the profiles file: readable by root only on most kernels.
std::optional<bool> listed_in_profiles(const std::string& root, const std::string& profile) {
  std::ifstream in(root + "/sys/kernel/security/apparmor/profiles");
  if (!in) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    size_t sp = line.rfind(" (");
    if (sp != std::string::npos && sp == profile.size() && line.compare(0, sp, profile) == 0) return true;
  }
  return false;
}

// The policy introspection tree (policy/profiles/NAME.N/name), which any user may read.
std::optional<bool> listed_in_policy_tree(const std::string& root, const std::string& profile) {
  std::string dir = root + "/sys/kernel/security/apparmor/policy/profiles";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  bool found = false;
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(dir + "/" + e->d_name + "/name");
    std::string name;
    if (std::getline(in, name) && name == profile) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

}  // namespace

Status check_apparmor_profile(const std::string& root, const std::string& profile, const std::string& asked_as) {
  std::string enabled;
  {
    std::ifstream in(root + "/sys/module/apparmor/parameters/enabled");
    std::getline(in, enabled);
  }
  const std::string& what = asked_as;
  if (enabled != "Y")
    return fail(Error(ErrorKind::host_unsupported, 0, what + ": AppArmor is not enabled on this host")
                    .with_hint("the box is not started without the profile it was asked to run under"));
  std::optional<bool> loaded = listed_in_profiles(root, profile);
  if (!loaded) loaded = listed_in_policy_tree(root, profile);
  if (!loaded)
    return fail(Error(ErrorKind::host_unsupported, EACCES, what + ": cannot read the loaded AppArmor profiles")
                    .with_hint("is securityfs mounted on /sys/kernel/security?"));
  if (!*loaded)
    return fail(Error(ErrorKind::config, 0, what + ": no such AppArmor profile is loaded")
                    .with_hint("load it first (apparmor_parser -r FILE)"));
  return {};
}

std::string apparmor_exec_request(const std::string& profile) { return "exec " + profile; }

int enter_profile_on_exec_raw(const std::string& request, const char** path) noexcept {
  // Opened through a verified procfs: a label written into a file bound over the real one (or
  // into a fake /proc) would leave the workload unconfined, or write somewhere else.
  static const char* const kFiles[][2] = {{"/proc/thread-self/attr/apparmor/exec", "thread-self/attr/apparmor/exec"},
                                          {"/proc/thread-self/attr/exec", "thread-self/attr/exec"}};
  int err = ENOENT;
  for (const auto& f : kFiles) {
    *path = f[0];
    int fd = sys::open_procfs_file(f[1], O_WRONLY);
    if (fd < 0) {
      err = -fd;
      if (err == ENOENT) continue;
      return err;
    }
    ssize_t n = ::write(fd, request.data(), request.size());
    err = n == static_cast<ssize_t>(request.size()) ? 0 : (n < 0 ? errno : EIO);
    ::close(fd);
    return err;
  }
  return err;
}

}  // namespace kern
