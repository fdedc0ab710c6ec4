// XDG paths for kern's store, state and configuration.
#include "runtime/sys/paths.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "runtime/sys/env.h"
#include "runtime/sys/syscall.h"

namespace kern::paths {
std::string home_dir() {
  std::string h = sys::env_value("HOME");
  if (!h.empty()) return h;
  if (struct passwd* pw = ::getpwuid(::getuid())) return pw->pw_dir;
  return "/";
}

std::string cache_dir() {
  std::string x = sys::env_value("XDG_CACHE_HOME");
  if (!x.empty()) return x + "/kern";
  return home_dir() + "/.cache/kern";
}

std::string config_file() {
  std::string k = sys::env_value("KERN_CONFIG");
  if (!k.empty()) return k;
  std::string x = sys::env_value("XDG_CONFIG_HOME");
  if (!x.empty()) return x + "/kern/kern.toml";
  return home_dir() + "/.config/kern/kern.toml";
}

Result<std::string> runtime_dir() {
  std::string base = sys::env_value("XDG_RUNTIME_DIR");
  std::string dir = base.empty() ? "/tmp/kern-" + std::to_string(::getuid()) : base + "/kern";
  struct stat st;
  // Made at a user's first box, there at every later one: looked at first, made if not there.
  if (::lstat(dir.c_str(), &st) != 0) {
    if (!base.empty()) {
      // $XDG_RUNTIME_DIR itself may be missing in a bare su session; make it private if so.
      if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST)
        return fail_errno("mkdir \"" + base + "\"");
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return fail_errno("mkdir \"" + dir + "\"");
    if (::lstat(dir.c_str(), &st) != 0) return fail_errno("lstat \"" + dir + "\"");
  }
  // Under /tmp anyone could have made the directory first: accept only ours, private.
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0)
    return fail(ErrorKind::setup, EPERM,
                "runtime dir \"" + dir + "\" is not a private directory owned by uid " +
                    std::to_string(::getuid()));
  return dir;
}

std::string clean_absolute_path(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    std::string_view comp = path.substr(pos, next - pos);
    pos = next + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(comp);
  }
  std::string out;
  for (auto p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

}  // namespace kern::paths
