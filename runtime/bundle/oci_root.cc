// build_oci_root: the container's first process builds its root (after clone and the id maps,
// before box init), see oci_root.h. The create process's half is oci_root_plan.cc.
#include "runtime/bundle/oci_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "runtime/channel.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/mountinfo.h"
#include "runtime/sys/procfs.h"

namespace kern::bundle {

namespace {

struct Fail {
  const char** what;
  std::string* detail;
  int set(int err, const char* w, const std::string& d) {
    *what = w;
    *detail = d;
    return err == 0 ? EIO : err;
  }
};

int open_in(int rootfd, const std::string& path, int flags, uint64_t resolve = 0) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve;
  std::string rel = path;
  while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  long fd = ::syscall(SYS_openat2, rootfd, rel.c_str(), &how, sizeof how);
  return fd < 0 ? -1 : static_cast<int>(fd);
}

// An O_PATH fd of `path` beneath rootfd, made (directories up to it, then a directory or an
// empty file) when missing. -1 with errno set on failure.
int make_in(int rootfd, const std::string& path, bool as_file) {
  int fd = open_in(rootfd, path, O_PATH);
  if (fd >= 0 || errno != ENOENT) return fd;
  size_t slash = path.find_last_of('/');
  std::string parent = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1);
  int pfd = make_in(rootfd, parent, false);
  if (pfd < 0) return -1;
  int dfd = ::openat(pfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  ::close(pfd);
  if (dfd < 0) return -1;
  int r;
  if (as_file) {
    r = ::openat(dfd, base.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (r >= 0) ::close(r);
  } else {
    r = ::mkdirat(dfd, base.c_str(), 0755);
  }
  int saved = errno;
  ::close(dfd);
  if (r < 0 && saved != EEXIST) {
    errno = saved;
    return -1;
  }
  return open_in(rootfd, path, O_PATH);
}

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }
int move_onto(int tree, int target);

// The flags a remount must keep: a user namespace cannot clear what its mount inherited locked.
unsigned long kept_flags(const std::string& target) {
  struct statvfs sv;
  if (::statvfs(target.c_str(), &sv) != 0) return 0;
  unsigned long f = 0;
  if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

constexpr unsigned long kRemountable = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME |
                                       MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME | MS_SYNCHRONOUS;

int remount_bind(const std::string& target, unsigned long flags) {
  unsigned long f = MS_BIND | MS_REMOUNT | (flags & kRemountable);
  if (::mount(nullptr, target.c_str(), nullptr, f, nullptr) == 0) return 0;
  if (errno != EPERM) return errno;
  return ::mount(nullptr, target.c_str(), nullptr, f | kept_flags(target), nullptr) == 0 ? 0 : errno;
}

bool source_is_dir(const OciMount& m) {
  struct stat st;
  int r = m.source_fd >= 0 ? ::fstat(m.source_fd, &st) : ::stat(m.source.c_str(), &st);
  return r != 0 || S_ISDIR(st.st_mode);
}

// The flags of a bind mount are set by a remount of the new mount: reached by path again (the
// fd the bind went through names the directory it now covers).
int remount_at(int rootfd, const std::string& dest, unsigned long flags) {
  if (!(flags & kRemountable)) return 0;
  int fd = open_in(rootfd, dest, O_PATH);
  if (fd < 0) return errno;
  int r = remount_bind(fd_path(fd), flags);
  ::close(fd);
  return r;
}

// Read-only all the way down: the mount at `dest` and every mount under it. A recursive bind
// asked read-only would otherwise leave its submounts writable (the host's /sys/fs/cgroup under
// a read-only bind of /sys: runc's CVE-2023-25809).
int readonly_below(int rootfd, const std::string& dest) {
  int fd = open_in(rootfd, dest, O_PATH);
  if (fd < 0) return errno;
  struct mount_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_RDONLY;
  int r = ::syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0 ? 0 : errno;
  ::close(fd);
  return r;
}

int bind_host(const std::string& src, const std::string& target, bool recursive) {
  return ::mount(src.c_str(), target.c_str(), nullptr, MS_BIND | (recursive ? MS_REC : 0), nullptr) == 0 ? 0 : errno;
}

// Without the data option (a devpts "gid=5" where gid 5 is not mapped, say), as runtimes do.
std::string drop_option(const std::string& data, const char* prefix) {
  std::string out;
  size_t pos = 0;
  while (pos <= data.size()) {
    size_t end = data.find(',', pos);
    if (end == std::string::npos) end = data.size();
    std::string o = data.substr(pos, end - pos);
    if (o.rfind(prefix, 0) != 0 && !o.empty()) out += (out.empty() ? "" : ",") + o;
    pos = end + 1;
  }
  return out;
}

// The files under /proc that a mount may cover (lxcfs binds its views there), as runc allows.
bool coverable_proc_file(const std::string& dest) {
  static const char* const kFiles[] = {"/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
                                       "/proc/swaps",   "/proc/uptime",    "/proc/loadavg", "/proc/slabinfo",
                                       "/proc/net/dev", "/proc/sys/kernel/ns_last_pid"};
  std::string d = dest;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  for (const char* k : kFiles)
    if (d == k) return true;
  return false;
}

bool on_procfs(int fd) {
  struct statfs sf;
  return ::fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

// A mount over procfs hides what kern and the kernel write there (an LSM label, a sysctl) behind
// a file of the configuration's choosing (runc's CVE-2019-16884 class); a proc mount reached
// through a symlink leaves /proc itself to whatever the image put there (CVE-2023-27561/28642).
// The check is on the resolved target, so a symlink in the root cannot route around it.
int check_proc_target(const OciMount& m, int tfd, Fail& f) {
  if (m.type == "proc" || m.type == "sysfs") return 0;  // checked before the mount point (mount_one)
  if (on_procfs(tfd) && !coverable_proc_file(m.destination))
    return f.set(EPERM, "mount over procfs (only proc, or a bind over one of lxcfs's /proc files)",
                 m.type + " on " + m.destination);
  return 0;
}

// tmpcopyup: what the tmpfs covers (dir, opened before the mount) copied into it (to, the new
// mount), as runc and crun do: directories, files, symlinks and nodes with their modes, owners
// and times. An owner the user namespace cannot give stays the copier's (rootless, a file of an
// unmapped id). 0, or errno with `where` naming the entry.
int copy_tree(int from, int to, std::string& where);

int copy_entry(int from, int to, const char* name, std::string& where) {
  struct stat st;
  if (::fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return where = name, errno;
  int r = 0;
  if (S_ISDIR(st.st_mode)) {
    if (::mkdirat(to, name, 0700) != 0 && errno != EEXIST) return where = name, errno;
    int sf = ::openat(from, name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (sf < 0) return where = name, errno;
    int df = ::openat(to, name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (df < 0) {
      r = errno;
      ::close(sf);
      return where = name, r;
    }
    std::string inner;
    r = copy_tree(sf, df, inner);
    if (r != 0) where = std::string(name) + "/" + inner;
    ::close(sf);
    ::close(df);
  } else if (S_ISREG(st.st_mode)) {
    int sf = ::openat(from, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (sf < 0) return where = name, errno;
    int df = ::openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (df < 0) {
      r = errno;
      ::close(sf);
      return where = name, r;
    }
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(sf, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n < 0) r = errno;
        break;
      }
      r = sys::write_all_raw(df, buf, static_cast<size_t>(n));
      if (r != 0) break;
    }
    ::close(sf);
    ::close(df);
    if (r != 0) return where = name, r;
  } else if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    ssize_t n = ::readlinkat(from, name, target.data(), target.size());
    if (n < 0) return where = name, errno;
    target.resize(static_cast<size_t>(n));
    if (::symlinkat(target.c_str(), to, name) != 0) return where = name, errno;
  } else {
    // A node (a socket or fifo left in the image, rarely a device): made where the kernel lets
    // this process, else left out as runc's copy would fail to make it too.
    if (::mknodat(to, name, st.st_mode, st.st_rdev) != 0) return 0;
  }
  // Owner, then mode (a chown clears set-id bits), then times; an owner this namespace cannot
  // give is left as it is.
  (void)::fchownat(to, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
  if (!S_ISLNK(st.st_mode) && ::fchmodat(to, name, st.st_mode & 07777, 0) != 0) return where = name, errno;
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  (void)::utimensat(to, name, times, AT_SYMLINK_NOFOLLOW);
  return 0;
}

int copy_tree(int from, int to, std::string& where) {
  int dup = ::openat(from, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dup < 0) return errno;
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    int e = errno;
    ::close(dup);
    return e;
  }
  int r = 0;
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    r = copy_entry(from, to, e->d_name, where);
    if (r != 0) break;
  }
  ::closedir(d);
  return r;
}

// A tmpfs with tmpcopyup over `tfd` (the covered directory): mounted writable, filled with a
// copy of the directory, given the directory's mode and owner when it was the image's
// (`existed`; runc's rule), then the flags asked for (a read-only one too).
int mount_tmpfs_copyup(int rootfd, const OciMount& m, int tfd, const char* data, bool existed, Fail& f) {
  int covered = ::openat(tfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (covered < 0) return f.set(errno, "open the directory tmpcopyup copies", m.destination);
  struct stat st;
  int r = ::fstat(covered, &st) == 0 ? 0 : errno;
  unsigned long flags = m.options.flags;
  std::string source = m.source.empty() ? m.type : m.source;
  if (r == 0 && ::mount(source.c_str(), fd_path(tfd).c_str(), "tmpfs", flags & ~MS_RDONLY, data) != 0) r = errno;
  if (r != 0) {
    ::close(covered);
    return f.set(r, "mount", m.type + " on " + m.destination);
  }
  int top = open_in(rootfd, m.destination, O_DIRECTORY | O_RDONLY);
  if (top < 0) {
    r = errno;
    ::close(covered);
    return f.set(r, "open the new tmpfs", m.destination);
  }
  std::string where;
  r = copy_tree(covered, top, where);
  ::close(covered);
  if (r == 0 && existed) {
    (void)::fchown(top, st.st_uid, st.st_gid);
    if (::fchmod(top, st.st_mode & 07777) != 0) r = errno;
  }
  ::close(top);
  if (r != 0) return f.set(r, "tmpcopyup: copy into the tmpfs", m.destination + "/" + where);
  if (flags & MS_RDONLY) {
    int fd = open_in(rootfd, m.destination, O_PATH);
    if (fd < 0) return f.set(errno, "open the new tmpfs", m.destination);
    r = ::mount(nullptr, fd_path(fd).c_str(), nullptr, MS_REMOUNT | (flags & kRemountable), data) == 0 ? 0 : errno;
    ::close(fd);
    if (r != 0) return f.set(r, "remount read-only", m.type + " on " + m.destination);
  }
  return 0;
}

// A "cgroup" mount on a cgroup v1 host (OciRoot::cgroup_v1): a tmpfs at the destination with a
// directory per hierarchy and a link per controller of a joint one ("cpu" -> "cpu,cpuacct"),
// read-only at the end when the mount asks for it, and always when it binds the creator's own
// directories (a rootless container): those may be the user's delegated cgroups outside the
// container, which it must not write whatever the configuration says (runc's CVE-2023-25809).
int mount_cgroup_v1(int rootfd, const OciMount& m, const std::string& target, unsigned long flags, const OciRoot& r,
                    Fail& f) {
  if (std::any_of(r.cgroup_v1.begin(), r.cgroup_v1.end(), [](const OciCgroupV1& h) { return h.bind; }))
    flags |= MS_RDONLY;
  unsigned long rw = flags & ~MS_RDONLY;
  if (::mount("tmpfs", target.c_str(), "tmpfs", rw | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") != 0)
    return f.set(errno, "mount tmpfs (cgroup v1) on", m.destination);
  for (const auto& h : r.cgroup_v1) {
    std::string dest = m.destination + "/" + h.name;
    int tfd = make_in(rootfd, dest, false);
    if (tfd < 0) return f.set(errno, "make the mount point", dest);
    std::string at = fd_path(tfd);
    int e = 0;
    if (r.own_cgroup_ns && !h.bind) {
      std::string opts;
      for (const auto& c : h.controllers) opts += (opts.empty() ? "" : ",") + c;
      if (opts.compare(0, 5, "name=") == 0) opts = "none," + opts;
      e = ::mount("cgroup", at.c_str(), "cgroup", flags | MS_NOSUID | MS_NODEV | MS_NOEXEC, opts.c_str()) == 0 ? 0 : errno;
    } else {
      e = bind_host(h.host_dir, at, false);
      if (e == 0) e = remount_at(rootfd, dest, flags | MS_NOSUID | MS_NODEV | MS_NOEXEC);
    }
    ::close(tfd);
    if (e != 0) return f.set(e, r.own_cgroup_ns && !h.bind ? "mount cgroup v1" : "bind cgroup v1", h.host_dir + " -> " + dest);
    if (h.controllers.size() > 1) {
      int dfd = open_in(rootfd, m.destination, O_DIRECTORY | O_RDONLY);
      if (dfd < 0) return f.set(errno, "open", m.destination);
      for (const auto& c : h.controllers)
        if (c != h.name && ::symlinkat(h.name.c_str(), dfd, c.c_str()) != 0 && errno != EEXIST) e = errno;
      ::close(dfd);
      if (e != 0) return f.set(e, "symlink a controller to its hierarchy in", m.destination);
    }
  }
  if ((flags & MS_RDONLY) && remount_at(rootfd, m.destination, flags | MS_NOSUID | MS_NODEV | MS_NOEXEC) != 0)
    return f.set(errno, "remount read-only", m.destination);
  return 0;
}

int mount_one(int rootfd, const OciMount& m, bool writable_for_now, const OciRoot& root, Fail& f) {
  const MountOptions& o = m.options;
  bool file = o.bind && !source_is_dir(m);
  bool existed = false;
  if (o.tmpcopyup) {
    int fd = open_in(rootfd, m.destination, O_PATH);
    existed = fd >= 0;
    if (fd >= 0) ::close(fd);
  }
  if (m.type == "proc" || m.type == "sysfs") {
    // On a directory of the root, never through a symlink in it, dangling or not (a proc reached
    // through one would be where the image's author wants it, and /proc where it is not).
    int fd = open_in(rootfd, m.destination, O_PATH, RESOLVE_NO_SYMLINKS);
    int e = errno;
    if (fd >= 0) ::close(fd);
    if (fd < 0 && e == ELOOP)
      return f.set(ELOOP, m.type == "proc" ? "mount proc through a symlink in the root (it goes on a directory)"
                                           : "mount sysfs through a symlink in the root (it goes on a directory)",
                   m.destination);
  }
  int tfd = make_in(rootfd, m.destination, file);
  if (tfd < 0) return f.set(errno, "make the mount point", m.destination);
  if (int e = check_proc_target(m, tfd, f); e != 0) {
    ::close(tfd);
    return e;
  }
  std::string target = fd_path(tfd);
  int r = 0;
  unsigned long flags = writable_for_now ? o.flags & ~MS_RDONLY : o.flags;
  if (o.bind) {
    r = m.source_fd >= 0 ? move_onto(m.source_fd, tfd) : bind_host(m.source, target, o.recursive_bind);
    if (r == 0) r = remount_at(rootfd, m.destination, flags);
    if (r == 0 && o.recursive_bind && (flags & MS_RDONLY)) r = readonly_below(rootfd, m.destination);
    if (r != 0) {
      ::close(tfd);
      return f.set(r, "bind mount", m.source + " -> " + m.destination);
    }
  } else {
    const char* data = o.data.empty() ? nullptr : o.data.c_str();
    // "cgroup" is the unified hierarchy where there is one: kern runs containers on cgroup v2.
    bool cgroup = m.type == "cgroup" || m.type == "cgroup2";
    const char* type = cgroup ? "cgroup2" : m.type.c_str();
    if (cgroup) data = nullptr;
    std::string source = m.source.empty() ? m.type : m.source;
    if (cgroup && m.type == "cgroup" && !root.cgroup_v1.empty()) {
      r = mount_cgroup_v1(rootfd, m, target, flags, root, f);
      ::close(tfd);
      return r;
    }
    if (o.tmpcopyup) {
      r = mount_tmpfs_copyup(rootfd, m, tfd, data, existed, f);
      ::close(tfd);
      if (r != 0) return r;
      tfd = -1;
    } else {
      r = ::mount(source.c_str(), target.c_str(), type, flags, data) == 0 ? 0 : errno;
    }
    if (r == EINVAL && m.type == "devpts" && data != nullptr) {
      std::string d = drop_option(o.data, "gid=");
      r = ::mount(source.c_str(), target.c_str(), type, flags, d.empty() ? nullptr : d.c_str()) == 0 ? 0 : errno;
    }
    if (r == EPERM || r == EBUSY || r == ENODEV || (cgroup && r != 0)) {
      // A user namespace may not mount these where the matching namespace is not its own: the
      // host's tree is bound instead (read-only when asked), as rootless runtimes do.
      const char* host = m.type == "sysfs"                             ? "/sys"
                         : m.type == "cgroup" || m.type == "cgroup2" ? "/sys/fs/cgroup"
                         : m.type == "mqueue"                        ? "/dev/mqueue"
                                                                     : nullptr;
      if (host != nullptr) {
        // The host's tree is read-only in the container, submounts included, whatever the
        // configuration says: a writable /sys/fs/cgroup lets a rootless container write into
        // the user's delegated cgroups outside it (runc's CVE-2023-25809).
        r = bind_host(host, target, true);
        if (r == 0) r = remount_at(rootfd, m.destination, flags | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
        if (r == 0) r = readonly_below(rootfd, m.destination);
      }
    }
    if (r != 0) {
      ::close(tfd);
      return f.set(r, "mount", m.type + " on " + m.destination);
    }
  }
  ::close(tfd);
  if (o.propagation != 0 || o.attr_set != 0 || o.attr_clr != 0) {
    // The target again: the fd above names the covered directory, not the new mount.
    tfd = open_in(rootfd, m.destination, O_PATH);
    if (tfd < 0) return f.set(errno, "open the mount", m.destination);
    target = fd_path(tfd);
    if (o.propagation != 0 && ::mount(nullptr, target.c_str(), nullptr, o.propagation, nullptr) != 0) r = errno;
    if (r == 0 && (o.attr_set != 0 || o.attr_clr != 0)) {
      struct mount_attr attr;
      std::memset(&attr, 0, sizeof attr);
      attr.attr_set = o.attr_set;
      attr.attr_clr = o.attr_clr;
      if (::syscall(SYS_mount_setattr, tfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) r = errno;
    }
    ::close(tfd);
    if (r != 0) return f.set(r, "set the mount's propagation or attributes", m.destination);
  }
  return 0;
}

int make_device(int rootfd, const OciDevice& d, bool is_default, Fail& f) {
  if (d.keep_ptmx_link) return 0;
  if (is_default) {
    // A default node the configuration already provides (a bind of the host's /dev, say) stays.
    int fd = open_in(rootfd, d.path, O_PATH);
    if (fd >= 0) {
      struct stat st;
      bool ok = ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
      ::close(fd);
      if (ok) return 0;
    }
  }
  if (d.bind_from_host) {
    int tfd = make_in(rootfd, d.path, true);
    if (tfd < 0) return f.set(errno, "make the device's mount point", d.path);
    int r = bind_host(d.path, fd_path(tfd), false);
    ::close(tfd);
    return r == 0 ? 0 : f.set(r, "bind the host's device", d.path);
  }
  size_t slash = d.path.find_last_of('/');
  std::string parent = slash == 0 ? "/" : d.path.substr(0, slash);
  int pfd = make_in(rootfd, parent, false);
  if (pfd < 0) return f.set(errno, "make the device's directory", parent);
  int dfd = ::openat(pfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  ::close(pfd);
  if (dfd < 0) return f.set(errno, "open the device's directory", parent);
  std::string base = d.path.substr(slash + 1);
  mode_t type = d.type == 'b' ? S_IFBLK : d.type == 'p' ? S_IFIFO : S_IFCHR;
  (void)::unlinkat(dfd, base.c_str(), 0);
  int r = ::mknodat(dfd, base.c_str(), type | (d.mode & 07777), makedev(d.major, d.minor)) == 0 ? 0 : errno;
  if (r == 0 && ::fchownat(dfd, base.c_str(), d.uid, d.gid, AT_SYMLINK_NOFOLLOW) != 0) r = errno;
  if (r == 0 && ::fchmodat(dfd, base.c_str(), d.mode & 07777, 0) != 0) r = errno;
  ::close(dfd);
  return r == 0 ? 0 : f.set(r, "mknod", d.path);
}

// /dev/fd, the stdio links and /dev/ptmx, where /dev exists and they do not.
void dev_links(int rootfd) {
  int dev = open_in(rootfd, "/dev", O_DIRECTORY | O_RDONLY);
  if (dev < 0) return;
  const char* links[][2] = {{"/proc/self/fd", "fd"},     {"/proc/self/fd/0", "stdin"},
                            {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}};
  for (const auto& l : links) (void)::symlinkat(l[0], dev, l[1]);
  struct stat st;
  if (::fstatat(dev, "pts/ptmx", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    (void)::unlinkat(dev, "ptmx", 0);
    (void)::symlinkat("pts/ptmx", dev, "ptmx");
  }
  ::close(dev);
}

// A read-only /dev, mounted writable until its devices, links and mount points were made.
int readonly_dev(int rootfd, const OciMount& m, Fail& f) {
  int fd = open_in(rootfd, "/dev", O_PATH | O_DIRECTORY);
  if (fd < 0) return f.set(errno, "open", "/dev");
  const char* data = m.options.data.empty() ? nullptr : m.options.data.c_str();
  int e = ::mount(nullptr, fd_path(fd).c_str(), nullptr, MS_REMOUNT | (m.options.flags & kRemountable) | MS_RDONLY,
                  data) == 0 ? 0 : errno;
  ::close(fd);
  return e == 0 ? 0 : f.set(e, "remount read-only", m.type + " on /dev");
}

// --no-pivot leaves the caller's mounts in the container's mount namespace under the moved
// root: a procfs or sysfs there is a fully visible one, which lets a nested user namespace mount
// a bare procfs (runc's no_pivot.bats). Each one outside the root is detached first (deepest
// first), or covered by an empty read-only tmpfs where it cannot be, as runc does.
int hide_outside_proc_and_sys(const std::string& root_path, Fail& f) {
  // As mountinfo names it: the root's real path.
  char real[PATH_MAX];
  if (::realpath(root_path.c_str(), real) == nullptr) return f.set(errno, "realpath", root_path);
  const std::string root = real;
  int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return f.set(errno, "open", "/proc/self/mountinfo");
  std::string text;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  std::vector<std::string> targets;
  for (const auto& m : sys::parse_mountinfo(text)) {
    if (m.type != "proc" && m.type != "sysfs") continue;
    if (m.point == root || m.point.compare(0, root.size() + 1, root + "/") == 0) continue;
    targets.push_back(m.point);
  }
  for (auto it = targets.rbegin(); it != targets.rend(); ++it) {
    if (::umount2(it->c_str(), MNT_DETACH) == 0 || errno == EINVAL || errno == ENOENT) continue;
    if (::mount("tmpfs", it->c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0") != 0)
      return f.set(errno, "cover with an empty tmpfs (--no-pivot)", *it);
  }
  return 0;
}

int enter_root(const OciRoot& r, Fail& f) {
  if (::chdir(r.root_path.c_str()) != 0) return f.set(errno, "chdir", r.root_path);
  if (r.no_pivot) {
    if (int e = hide_outside_proc_and_sys(r.root_path, f); e != 0) return e;
    if (::mount(r.root_path.c_str(), "/", nullptr, MS_MOVE, nullptr) != 0) return f.set(errno, "mount MS_MOVE", "/");
    if (::chroot(".") != 0) return f.set(errno, "chroot", r.root_path);
  } else {
    if (::syscall(SYS_pivot_root, ".", ".") != 0) return f.set(errno, "pivot_root", r.root_path);
    // The old root is stacked on "/" now: detach it, after making it stop propagating.
    if (::mount(nullptr, ".", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) return f.set(errno, "mount MS_SLAVE", "old root");
    if (::umount2(".", MNT_DETACH) != 0) return f.set(errno, "umount2", "old root");
  }
  if (::chdir("/") != 0) return f.set(errno, "chdir", "/");
  return 0;
}

// After pivot_root, /proc is the container's: readonlyPaths and maskedPaths are mounted from and
// onto descriptors (open_tree, fsmount, move_mount), never through /proc/self/fd paths that a
// root without a procfs of its own would resolve in its own files.
int move_onto(int tree, int target) {
  return ::syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0 ? 0 : errno;
}

int readonly_path(int rootfd, const std::string& p, Fail& f) {
  int fd = open_in(rootfd, p, O_PATH);
  if (fd < 0) return errno == ENOENT ? 0 : f.set(errno, "open", p);
  int r = 0;
  int tree = static_cast<int>(
      ::syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
  if (tree < 0) r = errno;
  if (r == 0) {
    // The bind's own mount only, as a remount of it would: mounts below keep their flags.
    struct mount_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) r = errno;
  }
  if (r == 0) r = move_onto(tree, fd);
  if (tree >= 0) ::close(tree);
  ::close(fd);
  return r == 0 ? 0 : f.set(r, "bind readonlyPaths entry read-only", p);
}

// A new read-only tmpfs on the directory `target`.
int empty_tmpfs_onto(int target) {
  int fs = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
  if (fs < 0) return errno;
  int r = 0;
  if (::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) != 0 ||
      ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    r = errno;
  int mnt = -1;
  if (r == 0) {
    mnt = static_cast<int>(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (mnt < 0) r = errno;
  }
  if (r == 0) r = move_onto(mnt, target);
  if (mnt >= 0) ::close(mnt);
  ::close(fs);
  return r;
}

// A bind of the file at `src` onto `target`, both descriptors: nothing is looked up by path
// again between the check of either and the mount.
int bind_fds(int src, int target) {
  int tree = static_cast<int>(::syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
  if (tree < 0) return errno;
  int r = move_onto(tree, target);
  ::close(tree);
  return r;
}

// The root's /dev/null, opened without following a symlink and checked to be the null device
// (character 1:3) before any masked file is covered with it. A /dev/null replaced by a symlink
// or another file (by a container sharing the mount, between the device step and this one)
// would otherwise bind what it names over the masked path, or leave the path unmasked (runc's
// CVE-2025-31133, youki's CVE-2025-62161). -1 with errno set on failure.
int open_null_device(int rootfd) {
  int fd = open_in(rootfd, "/dev/null", O_PATH, RESOLVE_NO_SYMLINKS);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3) {
    ::close(fd);
    errno = ENODEV;
    return -1;
  }
  return fd;
}

int mask_path(int rootfd, int& null_fd, const std::string& p, Fail& f) {
  int fd = open_in(rootfd, p, O_PATH);
  if (fd < 0) return errno == ENOENT ? 0 : f.set(errno, "open", p);
  struct stat st;
  int r = ::fstat(fd, &st) == 0 ? 0 : errno;
  if (r == 0 && S_ISDIR(st.st_mode)) {
    r = empty_tmpfs_onto(fd);
  } else if (r == 0) {
    if (null_fd < 0 && (null_fd = open_null_device(rootfd)) < 0) {
      r = errno;
      ::close(fd);
      return f.set(r, r == ENODEV ? "mask: /dev/null is not the character device 1:3" : "mask: open /dev/null", p);
    }
    r = bind_fds(null_fd, fd);
  }
  ::close(fd);
  return r == 0 ? 0 : f.set(r, "mask", p);
}

// `path` is under /proc; it is opened through a verified procfs, so a file bound over it (or a
// /proc that is not procfs) fails the create instead of taking the write.
int write_proc(const std::string& path, const std::string& value, Fail& f) {
  int fd = sys::open_procfs_file(path.c_str() + std::strlen("/proc/"), O_WRONLY);
  if (fd < 0) return f.set(-fd, -fd == EXDEV ? "open (not procfs, or a mount covers it)" : "open", path);
  ssize_t n = ::write(fd, value.data(), value.size());
  int r = n == static_cast<ssize_t>(value.size()) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return r == 0 ? 0 : f.set(r, "write", path);
}

// Tells the launcher the root is mounted and not yet entered, and waits until its hooks ran.
int wait_for_launcher(const RootBuildLink& link, Fail& f) {
  send_before_pivot(link.channel_fd);
  char go = 0;
  ssize_t n;
  do n = ::read(link.sync_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  return n == 1 && go == 'P' ? 0 : f.set(n < 0 ? errno : EPIPE, "wait for the hooks before pivot_root", "");
}

}  // namespace

int build_oci_root(const void* cookie, const RootBuildLink& link, const char** what, std::string* detail) {
  const OciRoot& r = *static_cast<const OciRoot*>(cookie);
  Fail f{what, detail};
  int rootfd = -1;
  int null_fd = -1;  // the verified /dev/null, once a masked file needs it
  auto close_root = [&] {
    if (rootfd >= 0) ::close(rootfd);
    rootfd = -1;
    if (null_fd >= 0) ::close(null_fd);
    null_fd = -1;
  };
  for (const auto& s : r.steps) {
    int e = 0;
    switch (s.kind) {
      case OciStepKind::root_propagation:
        if (::mount(nullptr, "/", nullptr, r.root_propagation, nullptr) != 0) e = f.set(errno, "mount propagation", "/");
        break;
      case OciStepKind::bind_root:
        if (::mount(r.root_path.c_str(), r.root_path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
          e = f.set(errno, "bind the root onto itself", r.root_path);
        else if ((rootfd = ::open(r.root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
          e = f.set(errno, "open", r.root_path);
        break;
      case OciStepKind::mount:
        e = mount_one(rootfd, r.mounts[static_cast<size_t>(s.index)], s.index == r.readonly_dev, r, f);
        break;
      case OciStepKind::device:
        // The defaults go with the first configured device or, without any, before pivot_root.
        if (s.index == 0)
          for (size_t i = 0; i < r.default_devices && e == 0; ++i) e = make_device(rootfd, r.devices[i], true, f);
        if (e == 0) e = make_device(rootfd, r.devices[r.default_devices + static_cast<size_t>(s.index)], false, f);
        break;
      case OciStepKind::pivot_root:
        if (r.devices.size() == r.default_devices)
          for (size_t i = 0; i < r.default_devices && e == 0; ++i) e = make_device(rootfd, r.devices[i], true, f);
        if (e == 0) dev_links(rootfd);
        if (e == 0 && r.readonly_dev >= 0) e = readonly_dev(rootfd, r.mounts[static_cast<size_t>(r.readonly_dev)], f);
        if (e == 0 && r.pause_before_pivot) e = wait_for_launcher(link, f);
        close_root();
        if (e == 0) e = enter_root(r, f);
        if (e == 0 && (rootfd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) e = f.set(errno, "open", "/");
        // sysctl before readonlyPaths and maskedPaths (/proc/sys is usually among them).
        for (size_t i = 0; e == 0 && i < r.sysctl.size(); ++i) e = write_proc(r.sysctl[i].first, r.sysctl[i].second, f);
        break;
      case OciStepKind::readonly:
        e = readonly_path(rootfd, r.readonly_paths[static_cast<size_t>(s.index)], f);
        break;
      case OciStepKind::mask:
        e = mask_path(rootfd, null_fd, r.masked_paths[static_cast<size_t>(s.index)], f);
        break;
      case OciStepKind::root_readonly:
        e = remount_bind("/", MS_RDONLY);
        if (e != 0) e = f.set(e, "remount read-only", "/");
        break;
    }
    if (e != 0) {
      close_root();
      return e;
    }
  }
  close_root();
  if (r.final_propagation != 0 && ::mount(nullptr, "/", nullptr, r.final_propagation, nullptr) != 0)
    return f.set(errno, "mount propagation (linux.rootfsPropagation)", "/");
  if (r.has_oom_score_adj) {
    int e = write_proc("/proc/self/oom_score_adj", std::to_string(r.oom_score_adj), f);
    if (e != 0) return e;
  }
  return 0;
}

}  // namespace kern::bundle
