// Identity mapping of a box's user namespace; see userns.h. Parent side.
#include "runtime/userns.h"

#include <fcntl.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "runtime/sys/fdio.h"

extern char** environ;

namespace kern {
namespace {

std::string user_name(uid_t uid) {
  if (struct passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

Status run_helper(const std::string& helper, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(helper.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  int rc = ::posix_spawnp(&pid, helper.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0)
    return fail(Error(ErrorKind::host_unsupported, rc, "posix_spawn " + helper)
                    .with_hint("--uid-range needs newuidmap and newgidmap: apt-get install uidmap"));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fail_errno("waitpid " + helper);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(ErrorKind::host_unsupported, 0,
                helper + " failed (status " + std::to_string(status) +
                    "): check the caller's entries in /etc/subuid and /etc/subgid");
  return {};
}

Result<SubidRange> range_from(const std::string& file, uid_t uid) {
  auto text = sys::read_file(AT_FDCWD, file, 1 << 20);
  if (!text)
    return fail(Error(ErrorKind::host_unsupported, text.error().sys_errno(),
                      "--uid-range: read \"" + file + "\"")
                    .with_hint("add a range for this user, e.g. usermod --add-subuids 100000-165535 USER"));
  return find_subid_range(*text, user_name(uid), uid, file);
}

}  // namespace

Result<SubidRange> find_subid_range(const std::string& text, const std::string& user, uid_t uid,
                                    const std::string& file_name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string who = line.substr(0, a);
    if (who != user && who != std::to_string(uid)) continue;
    try {
      SubidRange r{std::stoull(line.substr(a + 1, b - a - 1)), std::stoull(line.substr(b + 1))};
      if (r.count == 0) continue;
      return r;
    } catch (...) {
      continue;
    }
  }
  return fail(ErrorKind::host_unsupported, ENOENT,
              "--uid-range: no range for user \"" + user + "\" in " + file_name);
}

Status write_id_maps(pid_t child, uid_t uid, gid_t gid, bool uid_range) {
  std::string proc = "/proc/" + std::to_string(child);
  if (!uid_range) {
    KERN_TRY(sys::write_knob(AT_FDCWD, proc + "/setgroups", "deny"));
    KERN_TRY(sys::write_knob(AT_FDCWD, proc + "/uid_map", "0 " + std::to_string(uid) + " 1\n"));
    KERN_TRY(sys::write_knob(AT_FDCWD, proc + "/gid_map", "0 " + std::to_string(gid) + " 1\n"));
    return {};
  }
  KERN_TRY_ASSIGN(SubidRange su, range_from("/etc/subuid", uid));
  KERN_TRY_ASSIGN(SubidRange sg, range_from("/etc/subgid", uid));
  std::string p = std::to_string(child);
  KERN_TRY(run_helper("newuidmap", {p, "0", std::to_string(uid), "1", "1", std::to_string(su.start),
                                    std::to_string(su.count)}));
  KERN_TRY(run_helper("newgidmap", {p, "0", std::to_string(gid), "1", "1", std::to_string(sg.start),
                                    std::to_string(sg.count)}));
  return {};
}

namespace {
std::string map_text(const std::vector<IdMapLine>& m) {
  std::string t;
  for (const auto& l : m)
    t += std::to_string(l.inside) + " " + std::to_string(l.outside) + " " + std::to_string(l.count) + "\n";
  return t;
}

std::vector<std::string> helper_args(pid_t child, const std::vector<IdMapLine>& m) {
  std::vector<std::string> a{std::to_string(child)};
  for (const auto& l : m) {
    a.push_back(std::to_string(l.inside));
    a.push_back(std::to_string(l.outside));
    a.push_back(std::to_string(l.count));
  }
  return a;
}

bool own_single(const std::vector<IdMapLine>& m, uint32_t own) {
  return m.size() == 1 && m[0].outside == own && m[0].count == 1;
}
}  // namespace

Status write_explicit_id_maps(pid_t child, const std::vector<IdMapLine>& uid_map,
                              const std::vector<IdMapLine>& gid_map) {
  std::string proc = "/proc/" + std::to_string(child);
  bool root = ::geteuid() == 0;
  if (root || own_single(uid_map, ::geteuid())) {
    if (!uid_map.empty()) KERN_TRY(sys::write_knob(AT_FDCWD, proc + "/uid_map", map_text(uid_map)));
  } else {
    KERN_TRY(run_helper("newuidmap", helper_args(child, uid_map)));
  }
  if (root || own_single(gid_map, ::getegid())) {
    if (!root) KERN_TRY(sys::write_knob(AT_FDCWD, proc + "/setgroups", "deny"));
    if (!gid_map.empty()) KERN_TRY(sys::write_knob(AT_FDCWD, proc + "/gid_map", map_text(gid_map)));
  } else {
    KERN_TRY(run_helper("newgidmap", helper_args(child, gid_map)));
  }
  return {};
}

std::string describe_id_map(uid_t outer, bool uid_range) {
  std::string s = "0 " + std::to_string(outer) + " 1";
  if (uid_range) s += " + 1 subuid-range";
  return s;
}

}  // namespace kern
