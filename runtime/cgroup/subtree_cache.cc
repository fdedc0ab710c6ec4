// The remembered cgroup subtree (see subtree.h): one small file in the private runtime dir,
// "kern-cgroup-subtree v2" then the mount, the own cgroup it was found for (as /proc/self/cgroup
// names it, and relative to the mount), the base and the enabled controllers, one per line. A
// hit also gives the mount, so a start that finds its own cgroup there looks nothing else up.
// Parent (launcher) side. The mount alone is remembered too (cgroup-mount: the magic, then
// /proc/self/cgroup's path, the mount and the own cgroup under it), for hosts with no subtree.
// Anything unexpected in either file is a miss, never an error: the search simply runs again.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/cgroup/subtree.h"
#include "runtime/sys/fdio.h"

namespace kern {
namespace {

constexpr const char* kMagic = "kern-cgroup-subtree v2";

std::string cache_path(const CgroupHost& host) { return host.runtime_dir + "/cgroup-subtree"; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string::npos) e = text.size();
    out.push_back(text.substr(i, e - i));
    i = e + 1;
  }
  return out;
}

}  // namespace

std::optional<Subtree> cached_subtree(CgroupHost& host, const std::vector<std::string>& extra) {
  if (host.runtime_dir.empty() || host.proc_self.empty()) return std::nullopt;
  std::string text;
  if (read_knob_file(AT_FDCWD, cache_path(host), &text) != 0) return std::nullopt;
  auto l = lines_of(text);
  if (l.size() < 6 || l[0] != kMagic || l[1].empty() || l[1][0] != '/' || l[2] != host.proc_self ||
      l[3].empty() || l[3][0] != '/' || l[4].empty() || l[4][0] != '/')
    return std::nullopt;
  if (!host.mount.empty() && (l[1] != host.mount || l[3] != host.self)) return std::nullopt;
  Subtree t;
  t.base = l[4];
  t.controllers = controller_list(l[5]);
  t.how = "remembered";
  for (auto need : {std::string("memory"), std::string("pids")})
    if (std::find(t.controllers.begin(), t.controllers.end(), need) == t.controllers.end()) return std::nullopt;
  for (const auto& x : extra)
    if (std::find(t.controllers.begin(), t.controllers.end(), x) == t.controllers.end()) return std::nullopt;
  // The box cgroup's mkdir under the base proves the remembered mount (the caller forgets the
  // entry and searches when it fails).
  host.mount = l[1];
  host.self = l[3];
  return t;
}

void remember_subtree(const CgroupHost& host, const Subtree& tree) {
  if (host.runtime_dir.empty() || host.proc_self.empty()) return;
  std::string text = std::string(kMagic) + "\n" + host.mount + "\n" + host.proc_self + "\n" + host.self + "\n" +
                     tree.base + "\n";
  for (const auto& c : tree.controllers) text += c + " ";
  text += "\n";
  // Written aside and renamed: a concurrent start reads the old file or the new one, whole.
  std::string tmp = cache_path(host) + "." + std::to_string(host.pid);
  if (sys::write_file(AT_FDCWD, tmp, text, 0600) && ::rename(tmp.c_str(), cache_path(host).c_str()) == 0) return;
  ::unlink(tmp.c_str());
}

namespace {
constexpr const char* kMountMagic = "kern-cgroup-mount v1";
std::string mount_memo_path(const CgroupHost& host) { return host.runtime_dir + "/cgroup-mount"; }
}  // namespace

bool remembered_mount(CgroupHost& host) {
  if (host.runtime_dir.empty() || host.proc_self.empty() || !host.mount.empty()) return false;
  std::string text;
  if (read_knob_file(AT_FDCWD, mount_memo_path(host), &text) != 0) return false;
  auto l = lines_of(text);
  if (l.size() < 4 || l[0] != kMountMagic || l[1] != host.proc_self || l[2].empty() || l[2][0] != '/' ||
      l[3].empty() || l[3][0] != '/')
    return false;
  std::string own = (l[3] == "/" ? l[2] : l[2] + l[3]) + "/cgroup.controllers";
  if (::access(own.c_str(), F_OK) != 0) return false;
  host.mount = l[2];
  host.self = l[3];
  return true;
}

void remember_mount(const CgroupHost& host) {
  if (host.runtime_dir.empty() || host.proc_self.empty() || host.mount.empty() || host.self.empty()) return;
  std::string text = std::string(kMountMagic) + "\n" + host.proc_self + "\n" + host.mount + "\n" + host.self + "\n";
  std::string tmp = mount_memo_path(host) + "." + std::to_string(host.pid);
  if (sys::write_file(AT_FDCWD, tmp, text, 0600) && ::rename(tmp.c_str(), mount_memo_path(host).c_str()) == 0) return;
  ::unlink(tmp.c_str());
}

void forget_subtree(const CgroupHost& host) {
  if (!host.runtime_dir.empty()) ::unlink(cache_path(host).c_str());
}

}  // namespace kern
