// Finding cgroup v2 and a subtree kern may use; see subtree.h. Parent (launcher) side.
#include "runtime/cgroup/subtree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/sys/fdio.h"
#include "runtime/sys/mountinfo.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

constexpr const char* kBaseName = "kern";
constexpr const char* kLaunchLeaf = "kern-launch";
// The controllers kern knows, in the order it enables them.
constexpr std::string_view kKnown[] = {"memory", "pids", "cpu", "cpuset", "io"};

std::vector<std::string> wanted(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (auto k : kKnown)
    if (k == "memory" || k == "pids" || std::find(extra.begin(), extra.end(), k) != extra.end()) out.emplace_back(k);
  return out;
}

std::string abs_path(const CgroupHost& h, const std::string& rel) {
  return rel == "/" ? h.mount : h.mount + rel;
}

std::string join_rel(const std::string& rel, std::string_view name) {
  return (rel == "/" ? std::string() : rel) + "/" + std::string(name);
}

std::string parent_rel(const std::string& rel) {
  size_t p = rel.rfind('/');
  return (p == 0 || p == std::string::npos) ? std::string("/") : rel.substr(0, p);
}

bool writable(const std::string& path) { return ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0; }

std::string read_small(const std::string& path) {
  std::string out;
  return read_knob_file(AT_FDCWD, path, &out) == 0 ? out : std::string();
}

bool has_all(const std::vector<std::string>& have, std::initializer_list<std::string_view> need) {
  for (auto n : need)
    if (std::find(have.begin(), have.end(), n) == have.end()) return false;
  return true;
}

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Enables `names` in DIR/cgroup.subtree_control: all at once, else one by one.
void enable_controllers(const std::string& dir, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "+" : " +") + n;
  if (sys::write_knob(AT_FDCWD, dir + "/cgroup.subtree_control", all)) return;
  for (const auto& n : names) (void)sys::write_knob(AT_FDCWD, dir + "/cgroup.subtree_control", "+" + n);
}

std::vector<pid_t> pid_list(std::string_view text) {
  std::vector<pid_t> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string_view::npos) e = text.size();
    std::string line(text.substr(i, e - i));
    if (!line.empty()) out.push_back(static_cast<pid_t>(std::strtol(line.c_str(), nullptr, 10)));
    i = e + 1;
  }
  return out;
}

void sleep_ms(long ms) {
  struct timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  ::nanosleep(&ts, nullptr);
}

}  // namespace

std::optional<std::string> cgroup2_mount(std::string_view mountinfo, std::string* root) {
  for (const auto& m : sys::parse_mountinfo(mountinfo)) {
    if (m.type != "cgroup2") continue;
    if (root) *root = m.root;
    return m.point;
  }
  return std::nullopt;
}

std::optional<std::string> unified_cgroup_path(std::string_view proc_cgroup) {
  size_t i = 0;
  while (i < proc_cgroup.size()) {
    size_t e = proc_cgroup.find('\n', i);
    if (e == std::string_view::npos) e = proc_cgroup.size();
    std::string_view line = proc_cgroup.substr(i, e - i);
    i = e + 1;
    if (line.substr(0, 3) == "0::") {
      std::string p(line.substr(3));
      if (p.empty() || p[0] != '/') return std::nullopt;
      // " (deleted)" marks a removed cgroup: nothing to build on.
      if (p.size() > 10 && p.ends_with(" (deleted)")) return std::nullopt;
      while (p.size() > 1 && p.back() == '/') p.pop_back();
      return p;
    }
  }
  return std::nullopt;
}

std::vector<std::string> controller_list(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n') ++j;
    // The kernel lists bare names; "+name" (the written form) is read the same way.
    size_t from = (j > i && text[i] == '+') ? i + 1 : i;
    if (j > from) out.emplace_back(text.substr(from, j - from));
    i = j;
  }
  return out;
}

int read_knob_file(int dirfd, const std::string& path, std::string* out) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno;
  out->clear();
  char buf[4096];
  int err = 0;
  while (out->size() < (1u << 22)) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    out->append(buf, static_cast<size_t>(n));
    // Kernel files hand out whole records up to the buffer: a short read is the end.
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  ::close(fd);
  return err;
}

std::string box_cgroup_name(std::string_view kind, std::string_view name, pid_t pid, uint64_t start) {
  return std::string(kind) + "-" + std::string(name) + "-" + std::to_string(pid) + "-" + std::to_string(start);
}

bool parse_box_cgroup_name(std::string_view dir, pid_t* pid, uint64_t* start) {
  if (!(dir.starts_with("box-") || dir.starts_with("run-"))) return false;
  size_t b = dir.rfind('-');
  if (b == std::string_view::npos || b < 4) return false;
  size_t a = dir.rfind('-', b - 1);
  if (a == std::string_view::npos || a < 3) return false;
  std::string p(dir.substr(a + 1, b - a - 1)), s(dir.substr(b + 1));
  if (p.empty() || s.empty() || p.find_first_not_of("0123456789") != std::string::npos ||
      s.find_first_not_of("0123456789") != std::string::npos || p.size() > 9)
    return false;
  *pid = static_cast<pid_t>(std::strtol(p.c_str(), nullptr, 10));
  *start = std::strtoull(s.c_str(), nullptr, 10);
  return *pid > 0;
}

Result<CgroupHost> probe_cgroup_self() {
  CgroupHost h;
  h.euid = ::geteuid();
  h.pid = ::getpid();
  h.start_time = sys::own_start_time();
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) h.cpus = static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  std::string pc;
  if (int e = read_knob_file(AT_FDCWD, "/proc/self/cgroup", &pc); e != 0)
    return fail(Error(ErrorKind::setup, e, "open \"/proc/self/cgroup\""));
  if (auto self = unified_cgroup_path(pc)) h.proc_self = *self;
  return h;
}

Status locate_cgroup_mount(CgroupHost& h) {
  if (!h.mount.empty() || h.proc_self.empty()) return {};
  const std::string& self = h.proc_self;
  // The usual place first: cgroup2 at /sys/fs/cgroup with our cgroup under it. That spares
  // reading mountinfo, which is long in containers; anything else is looked up there.
  struct statfs fs;
  if (::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
    std::string own = self == "/" ? std::string("/sys/fs/cgroup") : "/sys/fs/cgroup" + self;
    if (::access(own.c_str(), F_OK) == 0) {
      h.mount = "/sys/fs/cgroup";
      h.self = self;
      return {};
    }
  }
  KERN_TRY_ASSIGN(std::string mi, sys::read_file(AT_FDCWD, "/proc/self/mountinfo", 8 << 20));
  std::string root;
  auto mount = cgroup2_mount(mi, &root);
  if (!mount) return {};
  // A mount of a sub-tree (inside a container) shows our path relative to its own root.
  std::string rel = self;
  if (root != "/" && !root.empty()) {
    if (rel.rfind(root, 0) != 0 || (rel.size() > root.size() && rel[root.size()] != '/')) return {};
    rel = rel.size() == root.size() ? "/" : rel.substr(root.size());
  }
  h.mount = *mount;
  h.self = rel;
  return {};
}

Result<CgroupHost> probe_cgroup_host() {
  KERN_TRY_ASSIGN(CgroupHost h, probe_cgroup_self());
  KERN_TRY(locate_cgroup_mount(h));
  return h;
}

Result<Subtree> prepare_base(const CgroupHost& host, const std::string& parent, std::string how,
                             const std::vector<std::string>& extra) {
  std::string base = join_rel(parent, kBaseName);
  std::string dir = abs_path(host, base);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
  auto offered = controller_list(read_small(dir + "/cgroup.controllers"));
  if (!has_all(offered, {"memory", "pids"}))
    return fail(ErrorKind::host_unsupported, 0, "\"" + dir + "\" does not get the memory and pids controllers");
  auto enabled = controller_list(read_small(dir + "/cgroup.subtree_control"));
  std::vector<std::string> missing;
  for (const auto& w : wanted(extra))
    if (contains(offered, w) && !contains(enabled, w)) missing.emplace_back(w);
  if (!missing.empty()) {
    enable_controllers(dir, missing);
    enabled = controller_list(read_small(dir + "/cgroup.subtree_control"));
  }
  if (!has_all(enabled, {"memory", "pids"}))
    return fail(ErrorKind::host_unsupported, 0, "cannot enable the memory and pids controllers in \"" + dir + "\"");
  Subtree t;
  t.base = base;
  for (auto k : kKnown)
    if (contains(enabled, k)) t.controllers.emplace_back(k);
  t.how = std::move(how);
  return t;
}

SubtreeResult prepare_subtree(const CgroupHost& host, const std::vector<std::string>& extra) {
  SubtreeResult r;
  if (host.mount.empty()) {
    r.why_not = "no cgroup v2 file system is mounted";
    return r;
  }
  const std::string own = abs_path(host, host.self);
  auto own_offered = controller_list(read_small(own + "/cgroup.controllers"));
  if (!has_all(own_offered, {"memory", "pids"})) {
    r.why_not = "cgroup v2 at " + host.mount + " offers no memory and pids controllers to " + host.self;
    // An ancestor cannot offer what the own cgroup's parent does not pass down; stop here.
    return r;
  }

  // 1. The own cgroup, when we may write it and are alone in it.
  std::string own_reason;
  if (writable(own) && writable(own + "/cgroup.procs") && writable(own + "/cgroup.subtree_control")) {
    if (host.self == "/") {
      // The root cgroup may hold processes and enable controllers at once.
      auto t = prepare_base(host, "/", "own cgroup", extra);
      if (t) {
        r.subtree = std::move(*t);
        return r;
      }
      own_reason = t.error().message();
    } else {
      auto procs = pid_list(read_small(own + "/cgroup.procs"));
      if (procs.size() == 1 && procs[0] == host.pid) {
        std::string leaf = own + "/" + kLaunchLeaf;
        if ((::mkdir(leaf.c_str(), 0755) == 0 || errno == EEXIST) &&
            sys::write_knob(AT_FDCWD, leaf + "/cgroup.procs", std::to_string(host.pid))) {
          std::vector<std::string> want;
          for (const auto& w : wanted(extra))
            if (contains(own_offered, w)) want.push_back(w);
          enable_controllers(own, want);
          auto t = prepare_base(host, host.self, "own cgroup", extra);
          if (t) {
            r.subtree = std::move(*t);
            return r;
          }
          own_reason = t.error().message();
        } else {
          own_reason = "cannot move kern into a leaf of its own cgroup";
        }
      } else {
        own_reason = "the own cgroup " + host.self + " holds other processes";
      }
    }
  } else {
    own_reason = "the own cgroup " + host.self + " is not delegated to uid " + std::to_string(host.euid);
  }

  // 2. The closest ancestor we may write whose children get memory and pids.
  if (host.self != "/") {
    std::string rel = host.self;
    do {
      rel = parent_rel(rel);
      std::string dir = abs_path(host, rel);
      if (!writable(dir) || !writable(dir + "/cgroup.procs")) continue;
      auto enabled = controller_list(read_small(dir + "/cgroup.subtree_control"));
      std::vector<std::string> missing;
      for (const auto& w : wanted(extra))
        if (!contains(enabled, w)) missing.push_back(w);
      if (!missing.empty()) {
        // An ancestor with processes of its own cannot enable more: then only what it has.
        auto offered = controller_list(read_small(dir + "/cgroup.controllers"));
        if (has_all(offered, {"memory", "pids"}) && writable(dir + "/cgroup.subtree_control")) {
          enable_controllers(dir, missing);
          enabled = controller_list(read_small(dir + "/cgroup.subtree_control"));
        }
        if (!has_all(enabled, {"memory", "pids"})) continue;
      }
      auto t = prepare_base(host, rel, "delegated ancestor " + rel, extra);
      if (t) {
        r.subtree = std::move(*t);
        return r;
      }
    } while (rel != "/");
  }
  r.why_not = own_reason + " and no ancestor is delegated";
  return r;
}

void reap_leftovers(const CgroupHost& host, const std::string& base, const std::string& own) {
  std::string dir = abs_path(host, base);
  // cgroup.stat counts the cgroups below the base: with only the caller's own (or none) there
  // is nothing to look for, which is the common case, and one small read instead of a listing.
  std::string stat;
  if (read_knob_file(AT_FDCWD, dir + "/cgroup.stat", &stat) == 0) {
    size_t at = stat.find("nr_descendants ");
    if (at != std::string::npos) {
      unsigned long n = std::strtoul(stat.c_str() + at + 15, nullptr, 10);
      if (n <= (own.empty() ? 0u : 1u)) return;
    }
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> dead;
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || own == e->d_name) continue;
    pid_t pid = 0;
    uint64_t start = 0;
    if (!parse_box_cgroup_name(e->d_name, &pid, &start)) continue;
    if (pid == host.pid && start == host.start_time) continue;
    uint64_t now = sys::process_start_time(pid);
    if (now != 0 && now == start) continue;  // its launcher is alive
    dead.emplace_back(e->d_name);
  }
  ::closedir(d);
  for (const auto& name : dead) {
    std::string p = dir + "/" + name;
    if (::rmdir(p.c_str()) == 0) continue;
    (void)sys::write_knob(AT_FDCWD, p + "/cgroup.kill", "1");
    for (int i = 0; i < 20 && ::rmdir(p.c_str()) != 0 && errno == EBUSY; ++i) sleep_ms(2);
  }
}

}  // namespace kern
