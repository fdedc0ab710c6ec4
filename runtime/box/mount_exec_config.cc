// The config-root steps of the mount walker; see mount_exec_config.h. Every target is opened
// beneath the root through MountOps (resolve: RESOLVE_IN_ROOT, made when missing) and mounted
// onto by descriptor; after pivot_root, readonlyPaths and maskedPaths are mounted from and onto
// descriptors only (clone_tree, empty_tmpfs_onto, move_tree), never through /proc/self/fd paths
// that a root without a procfs of its own would resolve in its own files.
#include "runtime/box/mount_exec_config.h"

#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace kern {
namespace {

constexpr unsigned long kRemountable = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME |
                                       MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME | MS_SYNCHRONOUS;
constexpr unsigned long kNoSuidDevExec = MS_NOSUID | MS_NODEV | MS_NOEXEC;
const std::string kSlash = "/";

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

// The host tree a user namespace binds where it may not mount the file system itself.
const char* host_tree_of(const std::string& type) {
  if (type == "sysfs") return "/sys";
  if (type == "cgroup" || type == "cgroup2") return "/sys/fs/cgroup";
  if (type == "mqueue") return "/dev/mqueue";
  return nullptr;
}

}  // namespace

struct ConfigRootSteps::Fail {
  const char** what;
  std::string* detail;
  int set(int err, const char* w, const std::string& d) {
    if (err < 0) err = -err;
    *what = w;
    *detail = d;
    return err == 0 ? EIO : err;
  }
};

ConfigRootSteps::~ConfigRootSteps() {
  if (null_fd_ >= 0) ops_.close_fd(null_fd_);
}

const std::string& ConfigRootSteps::root() const { return entered_ ? kSlash : ctx_.config->root_path; }

// The flags of a bind mount are set by a remount of the new mount: reached by path again (the
// fd the bind went through names the directory it now covers).
int ConfigRootSteps::remount_at(const std::string& dest, unsigned long flags) {
  if (!(flags & kRemountable)) return 0;
  int fd = ops_.resolve(root(), dest, CreateAs::nothing);
  if (fd < 0) return -fd;
  int r = ops_.remount(fd, "", flags, "", true);
  ops_.close_fd(fd);
  return r;
}

// Read-only all the way down: the mount at `dest` and every mount under it. A recursive bind
// asked read-only would otherwise leave its submounts writable (the host's /sys/fs/cgroup under
// a read-only bind of /sys: runc's CVE-2023-25809).
int ConfigRootSteps::readonly_below(const std::string& dest) {
  int fd = ops_.resolve(root(), dest, CreateAs::nothing);
  if (fd < 0) return -fd;
  int r = ops_.set_attr(fd, MOUNT_ATTR_RDONLY, 0, true);
  ops_.close_fd(fd);
  return r;
}

// A tmpfs with tmpcopyup over `tfd` (the covered directory): mounted writable, filled with a
// copy of the directory, given the directory's mode and owner when it was the image's
// (`existed`; runc's rule), then the flags asked for (a read-only one too).
int ConfigRootSteps::tmpfs_copyup(const ConfigMount& m, int tfd, const std::string& data, bool existed, Fail& f) {
  int covered = ops_.reopen_dir(tfd);
  if (covered < 0) return f.set(covered, "open the directory tmpcopyup copies", m.destination);
  unsigned long flags = m.options.flags;
  const std::string& source = m.source.empty() ? m.type : m.source;
  int r = ops_.mount_at("tmpfs", source, tfd, flags & ~MS_RDONLY, data);
  if (r != 0) {
    ops_.close_fd(covered);
    return f.set(r, "mount", m.type + " on " + m.destination);
  }
  int top = ops_.resolve(root(), m.destination, CreateAs::nothing);
  int topdir = top < 0 ? top : ops_.reopen_dir(top);
  if (top >= 0) ops_.close_fd(top);
  if (topdir < 0) {
    ops_.close_fd(covered);
    return f.set(topdir, "open the new tmpfs", m.destination);
  }
  std::string where;
  r = ops_.copy_tree(covered, topdir, existed, &where);
  ops_.close_fd(covered);
  ops_.close_fd(topdir);
  if (r != 0) return f.set(r, "tmpcopyup: copy into the tmpfs", m.destination + "/" + where);
  if (flags & MS_RDONLY) {
    int fd = ops_.resolve(root(), m.destination, CreateAs::nothing);
    if (fd < 0) return f.set(fd, "open the new tmpfs", m.destination);
    r = ops_.remount(fd, "", flags, data, false);
    ops_.close_fd(fd);
    if (r != 0) return f.set(r, "remount read-only", m.type + " on " + m.destination);
  }
  return 0;
}

// A "cgroup" mount on a cgroup v1 host (ConfigRoot::cgroup_v1): a tmpfs at the destination with
// a directory per hierarchy and a link per controller of a joint one ("cpu" -> "cpu,cpuacct"),
// read-only at the end when the mount asks for it, and always when it binds the creator's own
// directories (a rootless container): those may be the user's delegated cgroups outside the
// container, which it must not write whatever the configuration says (runc's CVE-2023-25809).
int ConfigRootSteps::cgroup_v1(const ConfigMount& m, int tfd, unsigned long flags, Fail& f) {
  const ConfigRoot& r = *ctx_.config;
  if (std::any_of(r.cgroup_v1.begin(), r.cgroup_v1.end(), [](const CgroupV1Dir& h) { return h.bind; }))
    flags |= MS_RDONLY;
  unsigned long rw = flags & ~MS_RDONLY;
  if (int e = ops_.mount_at("tmpfs", "tmpfs", tfd, rw | kNoSuidDevExec, "mode=755"); e != 0)
    return f.set(e, "mount tmpfs (cgroup v1) on", m.destination);
  for (const auto& h : r.cgroup_v1) {
    std::string dest = m.destination + "/" + h.name;
    int at = ops_.resolve(root(), dest, CreateAs::dir);
    if (at < 0) return f.set(at, "make the mount point", dest);
    bool fresh = r.own_cgroup_ns && !h.bind;
    int e = 0;
    if (fresh) {
      std::string opts;
      for (const auto& c : h.controllers) opts += (opts.empty() ? "" : ",") + c;
      if (opts.compare(0, 5, "name=") == 0) opts = "none," + opts;
      e = ops_.mount_at("cgroup", "cgroup", at, flags | kNoSuidDevExec, opts);
    } else {
      e = ops_.bind_host(h.host_dir, at, false);
      if (e == 0) e = remount_at(dest, flags | kNoSuidDevExec);
    }
    ops_.close_fd(at);
    if (e != 0) return f.set(e, fresh ? "mount cgroup v1" : "bind cgroup v1", h.host_dir + " -> " + dest);
    if (h.controllers.size() > 1) {
      int dir = ops_.resolve(root(), m.destination, CreateAs::nothing);
      if (dir < 0) return f.set(dir, "open", m.destination);
      for (const auto& c : h.controllers)
        if (c != h.name && e == 0) e = ops_.symlink_at(h.name, dir, c);
      ops_.close_fd(dir);
      if (e != 0) return f.set(e, "symlink a controller to its hierarchy in", m.destination);
    }
  }
  if (flags & MS_RDONLY) {
    if (int e = remount_at(m.destination, flags | kNoSuidDevExec); e != 0)
      return f.set(e, "remount read-only", m.destination);
  }
  return 0;
}

int ConfigRootSteps::mount_one(const ConfigMount& m, bool writable_for_now, Fail& f) {
  const MountOptions& o = m.options;
  bool file = false;
  if (o.bind) {
    int t = m.source_fd >= 0 ? ops_.file_type(m.source_fd) : ops_.host_file_type(m.source);
    file = t > 0 && t != S_IFDIR;
  }
  bool existed = false;
  if (o.tmpcopyup) {
    int fd = ops_.resolve(root(), m.destination, CreateAs::nothing);
    existed = fd >= 0;
    if (fd >= 0) ops_.close_fd(fd);
  }
  if (m.type == "proc" || m.type == "sysfs") {
    // On a directory of the root, never through a symlink in it, dangling or not (a proc reached
    // through one would be where the image's author wants it, and /proc where it is not).
    int fd = ops_.resolve_no_symlinks(root(), m.destination);
    if (fd >= 0) ops_.close_fd(fd);
    if (fd == -ELOOP)
      return f.set(ELOOP, m.type == "proc" ? "mount proc through a symlink in the root (it goes on a directory)"
                                           : "mount sysfs through a symlink in the root (it goes on a directory)",
                   m.destination);
  }
  int tfd = ops_.resolve(root(), m.destination, file ? CreateAs::file : CreateAs::dir);
  if (tfd < 0) return f.set(tfd, "make the mount point", m.destination);
  // A mount over procfs hides what kern and the kernel write there (an LSM label, a sysctl)
  // behind a file of the configuration's choosing (runc's CVE-2019-16884 class). The check is on
  // the resolved target, so a symlink in the root cannot route around it.
  if (m.type != "proc" && m.type != "sysfs" && ops_.on_procfs(tfd) == 1 && !coverable_proc_file(m.destination)) {
    ops_.close_fd(tfd);
    return f.set(EPERM, "mount over procfs (only proc, or a bind over one of lxcfs's /proc files)",
                 m.type + " on " + m.destination);
  }
  int r = 0;
  unsigned long flags = writable_for_now ? o.flags & ~MS_RDONLY : o.flags;
  if (o.bind) {
    r = m.source_fd >= 0 ? ops_.move_tree(m.source_fd, tfd) : ops_.bind_host(m.source, tfd, o.recursive_bind);
    if (r == 0) r = remount_at(m.destination, flags);
    if (r == 0 && o.recursive_bind && (flags & MS_RDONLY)) r = readonly_below(m.destination);
    ops_.close_fd(tfd);
    if (r != 0) return f.set(r, "bind mount", m.source + " -> " + m.destination);
  } else {
    // "cgroup" is the unified hierarchy where there is one: kern runs containers on cgroup v2.
    bool cgroup = m.type == "cgroup" || m.type == "cgroup2";
    const std::string fstype = cgroup ? "cgroup2" : m.type;
    const std::string data = cgroup ? "" : o.data;
    const std::string& source = m.source.empty() ? m.type : m.source;
    if (m.type == "cgroup" && !ctx_.config->cgroup_v1.empty()) {
      r = cgroup_v1(m, tfd, flags, f);
      ops_.close_fd(tfd);
      return r;
    }
    if (o.tmpcopyup) {
      r = tmpfs_copyup(m, tfd, data, existed, f);
      ops_.close_fd(tfd);
      if (r != 0) return r;
      tfd = -1;
    } else {
      r = ops_.mount_at(fstype, source, tfd, flags, data);
    }
    if (r == EINVAL && m.type == "devpts" && !data.empty())
      r = ops_.mount_at(fstype, source, tfd, flags, drop_option(o.data, "gid="));
    if (r == EPERM || r == EBUSY || r == ENODEV || (cgroup && r != 0)) {
      // A user namespace may not mount these where the matching namespace is not its own: the
      // host's tree is bound instead, read-only with its submounts whatever the configuration
      // says: a writable /sys/fs/cgroup lets a rootless container write into the user's
      // delegated cgroups outside it (runc's CVE-2023-25809).
      if (const char* host = host_tree_of(m.type); host != nullptr) {
        r = ops_.bind_host(host, tfd, true);
        if (r == 0) r = remount_at(m.destination, flags | MS_RDONLY | kNoSuidDevExec);
        if (r == 0) r = readonly_below(m.destination);
      }
    }
    if (tfd >= 0) ops_.close_fd(tfd);
    if (r != 0) return f.set(r, "mount", m.type + " on " + m.destination);
  }
  if (o.propagation != 0 || o.attr_set != 0 || o.attr_clr != 0) {
    // The target again: the fd above names the covered directory, not the new mount.
    int fd = ops_.resolve(root(), m.destination, CreateAs::nothing);
    if (fd < 0) return f.set(fd, "open the mount", m.destination);
    if (o.propagation != 0) r = ops_.set_propagation(fd, "", o.propagation);
    if (r == 0 && (o.attr_set != 0 || o.attr_clr != 0)) r = ops_.set_attr(fd, o.attr_set, o.attr_clr, true);
    ops_.close_fd(fd);
    if (r != 0) return f.set(r, "set the mount's propagation or attributes", m.destination);
  }
  return 0;
}

int ConfigRootSteps::device(const DeviceNode& d, bool is_default, Fail& f) {
  if (d.keep_ptmx_link) return 0;
  if (is_default) {
    // A default node the configuration already provides (a bind of the host's /dev, say) stays.
    int fd = ops_.resolve(root(), d.path, CreateAs::nothing);
    if (fd >= 0) {
      int t = ops_.file_type(fd);
      ops_.close_fd(fd);
      if (t == S_IFCHR) return 0;
    }
  }
  if (d.bind_from_host) {
    int tfd = ops_.resolve(root(), d.path, CreateAs::file);
    if (tfd < 0) return f.set(tfd, "make the device's mount point", d.path);
    int r = ops_.bind_host(d.path, tfd, false);
    ops_.close_fd(tfd);
    return r == 0 ? 0 : f.set(r, "bind the host's device", d.path);
  }
  size_t slash = d.path.find_last_of('/');
  std::string parent = slash == 0 ? "/" : d.path.substr(0, slash);
  int dir = ops_.resolve(root(), parent, CreateAs::dir);
  if (dir < 0) return f.set(dir, "make the device's directory", parent);
  unsigned type = d.type == 'b' ? S_IFBLK : d.type == 'p' ? S_IFIFO : S_IFCHR;
  int r = ops_.make_node(dir, d.path.substr(slash + 1), type | (d.mode & 07777), d.major, d.minor, d.uid, d.gid);
  ops_.close_fd(dir);
  return r == 0 ? 0 : f.set(r, "mknod", d.path);
}

// /dev/fd, the stdio links and /dev/ptmx, where /dev exists and they do not.
void ConfigRootSteps::dev_links() {
  int dev = ops_.resolve(root(), "/dev", CreateAs::nothing);
  if (dev < 0) return;
  static const char* const links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
                                         {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}};
  for (const auto& l : links) (void)ops_.symlink_at(l[0], dev, l[1]);
  int ptmx = ops_.resolve_no_symlinks(root(), "/dev/pts/ptmx");
  if (ptmx >= 0) {
    ops_.close_fd(ptmx);
    (void)ops_.unlink_at(dev, "ptmx");
    (void)ops_.symlink_at("pts/ptmx", dev, "ptmx");
  }
  ops_.close_fd(dev);
}

int ConfigRootSteps::readonly_path(const std::string& p, Fail& f) {
  int fd = ops_.resolve(root(), p, CreateAs::nothing);
  if (fd == -ENOENT) return 0;
  if (fd < 0) return f.set(fd, "open", p);
  // The bind's own mount only, as a remount of it would: mounts below keep their flags.
  int tree = ops_.clone_tree(fd, true);
  int r = tree < 0 ? -tree : ops_.set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0, false);
  if (r == 0) r = ops_.move_tree(tree, fd);
  if (tree >= 0) ops_.close_fd(tree);
  ops_.close_fd(fd);
  return r == 0 ? 0 : f.set(r, "bind readonlyPaths entry read-only", p);
}

// Files are masked with the root's /dev/null, opened without following a symlink and checked to
// be the null device (1:3) before anything is bound from it; every mask binds that descriptor.
// A /dev/null replaced by a symlink or another file (by a container sharing the mount, between
// the device step and this one) would otherwise bind what it names over the masked path, or
// leave the path unmasked (runc's CVE-2025-31133, youki's CVE-2025-62161).
int ConfigRootSteps::mask_path(const std::string& p, Fail& f) {
  int fd = ops_.resolve(root(), p, CreateAs::nothing);
  if (fd == -ENOENT) return 0;
  if (fd < 0) return f.set(fd, "open", p);
  int r = 0;
  int t = ops_.file_type(fd);
  if (t < 0) {
    r = -t;
  } else if (t == S_IFDIR) {
    r = ops_.empty_tmpfs_onto(fd);
  } else {
    if (null_fd_ < 0) {
      int n = ops_.resolve_no_symlinks(root(), "/dev/null");
      if (n < 0) {
        ops_.close_fd(fd);
        return f.set(n, "mask: open /dev/null", p);
      }
      if (int e = ops_.char_device(n, 1, 3); e != 0) {
        ops_.close_fd(n);
        ops_.close_fd(fd);
        return f.set(e, "mask: /dev/null is not the character device 1:3", p);
      }
      null_fd_ = n;
    }
    int tree = ops_.clone_tree(null_fd_, false);
    r = tree < 0 ? -tree : ops_.move_tree(tree, fd);
    if (tree >= 0) ops_.close_fd(tree);
  }
  ops_.close_fd(fd);
  return r == 0 ? 0 : f.set(r, "mask", p);
}

int ConfigRootSteps::run(const MountStep& s, const char** what, std::string* detail) {
  Fail f{what, detail};
  const ConfigRoot& r = *ctx_.config;
  const size_t i = static_cast<size_t>(s.index);
  switch (s.kind) {
    case MountStepKind::root_propagation: {
      int e = ops_.set_propagation(-1, "/", r.root_propagation);
      return e == 0 ? 0 : f.set(e, "mount propagation", "/");
    }
    case MountStepKind::bind_root: {
      int e = ops_.bind_host_path(r.root_path, r.root_path, true);
      return e == 0 ? 0 : f.set(e, "bind the root onto itself", r.root_path);
    }
    case MountStepKind::config_mount:
      return mount_one(r.mounts[i], s.index == r.readonly_dev, f);
    case MountStepKind::default_devices:
      for (size_t d = 0; d < r.default_devices; ++d)
        if (int e = device(r.devices[d], true, f); e != 0) return e;
      return 0;
    case MountStepKind::config_device:
      return device(r.devices[r.default_devices + i], false, f);
    case MountStepKind::dev_links:
      dev_links();
      return 0;
    case MountStepKind::readonly_dev: {
      const ConfigMount& m = r.mounts[static_cast<size_t>(r.readonly_dev)];
      int fd = ops_.resolve(root(), "/dev", CreateAs::nothing);
      if (fd < 0) return f.set(fd, "open", "/dev");
      int e = ops_.remount(fd, "", (m.options.flags & kRemountable) | MS_RDONLY, m.options.data, false);
      ops_.close_fd(fd);
      return e == 0 ? 0 : f.set(e, "remount read-only", m.type + " on /dev");
    }
    case MountStepKind::hooks_before_enter: {
      int e = ops_.wait_for_launcher(ctx_.channel_fd, ctx_.sync_fd);
      return e == 0 ? 0 : f.set(e, "wait for the hooks before pivot_root", "");
    }
    case MountStepKind::enter_root: {
      int e = r.no_pivot ? ops_.chroot_into(r.root_path) : ops_.pivot(r.root_path);
      entered_ = true;
      return e == 0 ? 0 : f.set(e, r.no_pivot ? "chroot (--no-pivot)" : "pivot_root", r.root_path);
    }
    case MountStepKind::sysctl: {
      int e = ops_.write_proc(r.sysctl[i].first, r.sysctl[i].second);
      return e == 0 ? 0 : f.set(e, e == EXDEV ? "open (not procfs, or a mount covers it)" : "write", r.sysctl[i].first);
    }
    case MountStepKind::config_readonly:
      return readonly_path(r.readonly_paths[i], f);
    case MountStepKind::config_mask:
      return mask_path(r.masked_paths[i], f);
    case MountStepKind::root_readonly: {
      int e = ops_.remount(-1, "/", MS_RDONLY, "", true);
      return e == 0 ? 0 : f.set(e, "remount read-only", "/");
    }
    case MountStepKind::final_propagation: {
      int e = ops_.set_propagation(-1, "/", r.final_propagation);
      return e == 0 ? 0 : f.set(e, "mount propagation (linux.rootfsPropagation)", "/");
    }
    case MountStepKind::oom_score_adj: {
      int e = ops_.write_proc("/proc/self/oom_score_adj", std::to_string(r.oom_score_adj));
      return e == 0 ? 0 : f.set(e, e == EXDEV ? "open (not procfs, or a mount covers it)" : "write", s.target);
    }
    default:
      return f.set(EINVAL, "not a config-root step", s.target);
  }
}

}  // namespace kern
