// The container store under --root (see state_dir.h).
#include "runtime/bundle/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "runtime/bundle/live_container.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern::bundle {

std::string default_state_root(uid_t euid, const char* xdg_runtime_dir, bool initial_userns) {
  if (euid == 0 && initial_userns) return "/run/kern-oci";
  if (xdg_runtime_dir && *xdg_runtime_dir == '/') return std::string(xdg_runtime_dir) + "/kern-oci";
  return "/tmp/kern-oci-" + std::to_string(euid);
}

bool in_initial_user_namespace() {
  auto map = sys::read_file(AT_FDCWD, "/proc/self/uid_map", 4096);
  if (!map) return true;
  unsigned long inside = 1, outside = 1, count = 0;
  return std::sscanf(map->c_str(), "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 && outside == 0 &&
         count == 4294967295ul;
}

namespace {
// --root and the directories above it, as engines expect (containerd's shim passes
// <runc root>/<namespace>, whose parent need not exist yet). Parents are made 0711, the root 0700.
Status make_dir(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    std::string parent = path.substr(0, pos);
    if (::mkdir(parent.c_str(), 0711) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + parent + "\"");
  }
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return {};
  return fail_errno("mkdir \"" + path + "\"");
}

std::string broken_hint(const std::string& id) {
  return "kern oci delete --force " + id + " removes this entry (and nothing it cannot tell is the container's)";
}

}  // namespace

Result<StateDir> StateDir::open(const std::string& root) {
  if (root.empty() || root[0] != '/') return fail(ErrorKind::usage, 0, "--root: must be an absolute path");
  KERN_TRY(make_dir(root));
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) return fail_errno("stat \"" + root + "\"");
  if (!S_ISDIR(st.st_mode)) return fail(ErrorKind::setup, ENOTDIR, "--root \"" + root + "\"");
  if (st.st_uid != ::geteuid() || (st.st_mode & 022))
    return fail(ErrorKind::setup, EPERM, "--root \"" + root + "\" is not ours alone (owner or mode)");
  return StateDir(root);
}

Status StateDir::create(const std::string& id) const {
  KERN_TRY(check_container_id(id));
  if (::mkdir(container_dir(id).c_str(), 0700) != 0) {
    if (errno == EEXIST)
      return fail(Error(ErrorKind::usage, 0, "container \"" + id + "\" exists already")
                      .with_hint("when its entry is broken (kern oci list names those on stderr), kern oci delete --force " +
                                 id + " removes it"));
    return fail_errno("mkdir \"" + container_dir(id) + "\"");
  }
  return {};
}

Status StateDir::write(const ContainerRecord& r) const {
  std::string dir = container_dir(r.id);
  // One writer at a time, from the write of state.json.tmp to the swap: two at once could
  // otherwise swap the older record back in, or one rename the other's half-written file.
  // Readers take no lock: they see one whole record or the other.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) return fail_errno("open \"" + dir + "\"");
  UniqueFd held(dfd);
  while (::flock(dfd, LOCK_EX) != 0)
    if (errno != EINTR) return fail_errno("flock LOCK_EX \"" + dir + "\"");
  struct stat st;
  if (::fstat(dfd, &st) != 0) return fail_errno("fstat \"" + dir + "\"");
  ContainerRecord stamped = r;
  stamped.entry_ino = st.st_ino;
  const std::string tmp = dir + "/state.json.tmp", path = dir + "/state.json";
  KERN_TRY(sys::write_file(AT_FDCWD, tmp, record_json(stamped), 0600));
  // Swapped with the record it replaces, when there is one: a reader sees the old record or the
  // new one, as with a rename over it, but no inode is freed or allocated for the next write
  // (state.json.tmp keeps the old record, which nothing reads, and is that write's file) and
  // ext4 does not write the new file out first, as it does for a rename that replaces a file:
  // 0.1-0.2 ms each on ext4 in a loop of containers. The first write, or a file system without
  // RENAME_EXCHANGE, renames.
  KERN_TRY_ASSIGN(sys::Exchange x, sys::exchange_at(AT_FDCWD, tmp, AT_FDCWD, path));
  if (x == sys::Exchange::swapped) return {};
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail_errno("rename \"" + path + "\"");
  return {};
}

Result<std::string> StateDir::read_entry_file(const std::string& id, const char* name, size_t limit) const {
  KERN_TRY(check_container_id(id));
  std::string path = container_dir(id) + "/" + name;
  // Never blocks (a FIFO put there opens at once and is refused below), never follows a link.
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ELOOP) return fail(ErrorKind::config, 0, "\"" + path + "\" is a symbolic link");
    return fail_errno("open \"" + path + "\"", ErrorKind::config);
  }
  UniqueFd owned(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail_errno("fstat \"" + path + "\"");
  if (!S_ISREG(st.st_mode)) return fail(ErrorKind::config, 0, "\"" + path + "\" is not a regular file");
  return sys::read_all(fd, limit, "\"" + path + "\"");
}

Result<ContainerRecord> StateDir::read(const std::string& id) const {
  KERN_TRY(check_container_id(id));
  auto text = read_entry_file(id, "state.json", 1 << 20);
  if (!text) {
    if (text.error().sys_errno() != ENOENT) return fail(std::move(text).error().with_hint(broken_hint(id)));
    struct stat st;
    if (::lstat(container_dir(id).c_str(), &st) != 0)
      return fail(ErrorKind::config, ENOENT, "container \"" + id + "\" does not exist");
    return fail(Error(ErrorKind::config, 0, "container \"" + id + "\" has no state.json in \"" + container_dir(id) +
                                                "\" (its create did not finish)")
                    .with_hint(broken_hint(id)));
  }
  auto r = parse_record(*text);
  if (!r) return fail(std::move(r).error().with_context("reading " + container_dir(id) + "/state.json").with_hint(broken_hint(id)));
  // A record copied from another container's directory names that container: its process is
  // not this entry's.
  if (r->id != id)
    return fail(Error(ErrorKind::config, 0, "\"" + container_dir(id) + "/state.json\" is the record of container \"" +
                                                log::sanitize(r->id) + "\", not of \"" + id + "\"")
                    .with_hint(broken_hint(id)));
  struct stat st;
  if (r->entry_ino != 0 && (::lstat(container_dir(id).c_str(), &st) != 0 || st.st_ino != r->entry_ino))
    return fail(Error(ErrorKind::config, 0, "\"" + container_dir(id) + "/state.json\" was written in another directory (a copy of a container's entry?)")
                    .with_hint(broken_hint(id)));
  return r;
}

bool StateDir::exists(const std::string& id) const {
  struct stat st;
  return check_container_id(id) && ::lstat(container_dir(id).c_str(), &st) == 0;
}

Result<std::vector<std::string>> StateDir::list() const {
  DIR* d = ::opendir(root_.c_str());
  if (!d) return fail_errno("opendir \"" + root_ + "\"");
  std::vector<std::string> ids;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == ".." || !check_container_id(n)) continue;
    if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) ids.push_back(n);
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

Status StateDir::remove(const std::string& id) const {
  KERN_TRY(check_container_id(id));
  return sys::remove_tree(AT_FDCWD, container_dir(id));
}

ContainerStatus current_status(const ContainerRecord& r) {
  uint64_t start = r.pid > 0 ? sys::process_start_time(r.pid) : 0;
  if (start != 0 && start == r.pid_start_time && !own_process(r, nullptr)) start = 0;  // another's: ours is gone
  return observe(r, PidObservation{start, start != 0 && cgroup_frozen(r.cgroup)});
}

}  // namespace kern::bundle
