// The remembered cgroup subtree (see cgroup_tree.h): one small file in the private runtime dir,
// "kern-cgroup-subtree v1" then the mount, the own cgroup it was found for, the base and the
// enabled controllers, one per line. Parent (launcher) side. Anything unexpected in the file
// is a miss, never an error: the search simply runs again.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/cgroup_tree.h"
#include "runtime/sys/fdio.h"

namespace kern {
namespace {

constexpr const char* kMagic = "kern-cgroup-subtree v1";

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

std::optional<Subtree> cached_subtree(const CgroupHost& host, const std::vector<std::string>& extra) {
  if (host.runtime_dir.empty() || host.mount.empty()) return std::nullopt;
  std::string text;
  if (read_knob_file(AT_FDCWD, cache_path(host), &text) != 0) return std::nullopt;
  auto l = lines_of(text);
  if (l.size() < 5 || l[0] != kMagic || l[1] != host.mount || l[2] != host.self || l[3].empty() || l[3][0] != '/')
    return std::nullopt;
  Subtree t;
  t.base = l[3];
  t.controllers = controller_list(l[4]);
  t.how = "remembered";
  for (auto need : {std::string("memory"), std::string("pids")})
    if (std::find(t.controllers.begin(), t.controllers.end(), need) == t.controllers.end()) return std::nullopt;
  for (const auto& x : extra)
    if (std::find(t.controllers.begin(), t.controllers.end(), x) == t.controllers.end()) return std::nullopt;
  return t;
}

void remember_subtree(const CgroupHost& host, const Subtree& tree) {
  if (host.runtime_dir.empty()) return;
  std::string text = std::string(kMagic) + "\n" + host.mount + "\n" + host.self + "\n" + tree.base + "\n";
  for (const auto& c : tree.controllers) text += c + " ";
  text += "\n";
  // Written aside and renamed: a concurrent start reads the old file or the new one, whole.
  std::string tmp = cache_path(host) + "." + std::to_string(host.pid);
  if (sys::write_file(AT_FDCWD, tmp, text, 0600) && ::rename(tmp.c_str(), cache_path(host).c_str()) == 0) return;
  ::unlink(tmp.c_str());
}

void forget_subtree(const CgroupHost& host) {
  if (!host.runtime_dir.empty()) ::unlink(cache_path(host).c_str());
}

}  // namespace kern
