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

std::string choose_runtime_base(const std::string& xdg, unsigned uid, const DirProbe& probe) {
  // $XDG_RUNTIME_DIR when it is this user's directory, or missing (made below, private): `su`
  // without -l keeps the caller's, which is not.
  if (!xdg.empty()) {
    std::optional<DirFacts> f = probe(xdg);
    if (!f || (f->is_dir && f->uid == uid)) return xdg;
  }
  // Else the directory pam_systemd gives a session, found as podman finds it, so that a login
  // shell and `sudo -iu`, `su -` or cron (which set no XDG_RUNTIME_DIR) see the same boxes:
  // only when it is a directory private to the user, as the session's own is.
  std::string run = "/run/user/" + std::to_string(uid);
  std::optional<DirFacts> f = probe(run);
  if (f && f->is_dir && f->uid == uid && (f->mode & 077) == 0) return run;
  return "";
}

std::optional<DirFacts> probe_dir(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    return DirFacts{false, 0, 0};
  }
  return DirFacts{S_ISDIR(st.st_mode), static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_mode & 07777)};
}

Result<std::string> runtime_dir() {
  std::string base = choose_runtime_base(sys::env_value("XDG_RUNTIME_DIR"), ::getuid(), probe_dir);
  std::string dir = base.empty() ? "/tmp/kern-" + std::to_string(::getuid()) : base + "/kern";
  struct stat st;
  // Made at a user's first box, there at every later one: looked at first, made if not there.
  if (::lstat(dir.c_str(), &st) != 0) {
    if (!base.empty()) {
      // $XDG_RUNTIME_DIR itself may be missing in a bare su session; make it private if so.
      if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST)
        return fail_errno("mkdir \"" + base + "\"");
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
    if (::lstat(dir.c_str(), &st) != 0) return fail_errno("lstat \"" + dir + "\"");
  }
  // Under /tmp anyone could have made the directory first: accept only ours, private.
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0)
    return fail(ErrorKind::setup, EPERM,
                "runtime dir \"" + dir + "\" is not a private directory owned by uid " +
                    std::to_string(::getuid()));
  return dir;
}

std::vector<std::string> path_components(std::string_view path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    std::string_view comp = path.substr(pos, next - pos);
    pos = next + 1;
    if (!comp.empty() && comp != ".") out.emplace_back(comp);
  }
  return out;
}

std::string clean_absolute_path(std::string_view path) {
  std::vector<std::string> parts;
  for (auto& comp : path_components(path)) {
    if (comp == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(std::move(comp));
  }
  std::string out;
  for (auto p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

}  // namespace kern::paths
