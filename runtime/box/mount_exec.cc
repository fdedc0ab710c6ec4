// Executes the mount plan in the child, a kern box's and a config's (mount_exec_config.cc)
// alike; see mount_exec.h.
#include "runtime/box/mount_exec.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "runtime/box/mount_exec_config.h"

namespace kern {
namespace {

// The record getdents64 fills (the kernel's struct linux_dirent64; glibc has no declaration).
struct linux_dirent64_view {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

constexpr unsigned long kNoSuidDevExec = MS_NOSUID | MS_NODEV | MS_NOEXEC;

std::string octal(unsigned mode) {
  char buf[8];
  int n = 0;
  char tmp[8];
  do {
    tmp[n++] = static_cast<char>('0' + (mode & 7));
    mode >>= 3;
  } while (mode != 0 && n < 7);
  int i = 0;
  buf[i++] = '0';
  while (n > 0) buf[i++] = tmp[--n];
  return std::string(buf, static_cast<size_t>(i));
}

std::string tmpfs_data(const MountStep& s) {
  std::string d = "mode=" + octal(s.mode);
  if (s.size != 0) d += ",size=" + std::to_string(s.size);
  return d;
}

// Whether the directory `fd` (readable) holds nothing but "." and "..". getdents64 into a
// buffer on the stack: nothing allocated in the child.
bool dir_empty(int fd) {
  alignas(8) char buf[512];
  long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
  for (long off = 0; off < n;) {
    const auto* d = reinterpret_cast<const linux_dirent64_view*>(buf + off);
    const char* name = buf + off + offsetof(linux_dirent64_view, d_name);
    if (!(name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))) return false;
    off += d->d_reclen;
  }
  return n >= 0;
}

class Walker {
 public:
  Walker(const MountContext& ctx, MountOps& ops, MountFailure* f, SkipFn on_skip, void* cookie)
      : ctx_(ctx), ops_(ops), f_(f), on_skip_(on_skip), cookie_(cookie), config_(ctx, ops) {}
  ~Walker() {
    if (mask_tree_ >= 0) ops_.close_fd(mask_tree_);
    if (null_fd_ >= 0) ops_.close_fd(null_fd_);
  }
  Walker(const Walker&) = delete;
  Walker& operator=(const Walker&) = delete;

  bool run(std::span<const MountStep> plan) {
    for (const auto& step : plan) {
      step_ = &step;
      if (!one(step)) return false;
    }
    return true;
  }

 private:
  std::string root() const { return ctx_.scratch + "/root"; }

  bool failed(int err, const char* what) {
    f_->err = err < 0 ? -err : err;
    f_->step = step_;
    f_->what = what;
    return false;
  }

  // A step the box can do without: reported as skipped when there is someone to tell, a failure
  // otherwise (nothing is ever skipped silently).
  bool skipped(int err, const char* what) {
    if (on_skip_ == nullptr) return failed(err, what);
    on_skip_(cookie_, *step_, err);
    return true;
  }

  int open_target(const std::string& path, CreateAs create) { return ops_.resolve(root(), path, create); }

  bool mount_fs_at(const MountStep& s, const char* fstype, unsigned long flags, const std::string& data,
                   CreateAs create, bool optional_target) {
    int fd = open_target(s.target, create);
    if (fd < 0) {
      if (optional_target && (fd == -ENOENT || fd == -EROFS)) return true;
      return failed(fd, "resolve");
    }
    int r = ops_.mount_at(fstype, fstype, fd, flags, data);
    ops_.close_fd(fd);
    if (r != 0) return failed(r, "mount");
    return true;
  }

  bool bind_into(int source_fd, const std::string& source, const MountStep& s, CreateAs create,
                 bool ro, bool optional_target) {
    int fd = open_target(s.target, create);
    if (fd < 0) {
      if (optional_target && fd == -ENOENT) return true;
      return failed(fd, "resolve");
    }
    int r = ops_.bind_at(source_fd, source, fd, ro);
    ops_.close_fd(fd);
    if (r != 0) return failed(r, "bind");
    return true;
  }

  // The first directory mask is a new empty read-only tmpfs; every later one is a bind of that
  // same mount (its flags, read-only nosuid nodev noexec, go with the clone). Nothing can be
  // written into any of them, so sharing one filesystem shares nothing between the masked
  // places, and each further mask costs a bind instead of a new superblock (and its teardown).
  bool mask_dir(const MountStep& s) {
    if (mask_tree_ >= 0) return bind_into(mask_tree_, "", s, CreateAs::nothing, false, true);
    if (!mount_fs_at(s, "tmpfs", kNoSuidDevExec | MS_RDONLY, "size=4k,mode=0555", CreateAs::nothing, true))
      return false;
    int fd = open_target(s.target, CreateAs::nothing);  // now the new tmpfs's root
    if (fd == -ENOENT) return true;  // nothing was mounted there (the target is missing)
    if (fd < 0) return failed(fd, "resolve");
    mask_tree_ = fd;
    return true;
  }

  // Files are masked with the host's /dev/null, opened once without following a symlink and
  // checked to be the null device (1:3) before anything is bound from it; every mask binds that
  // descriptor, so no path is looked up again between the check and a bind (the runc
  // CVE-2025-31133 class, where the source of the mask was swapped).
  bool mask_file(const MountStep& s) {
    if (null_fd_ < 0) {
      int fd = ops_.open_host("/dev/null");
      if (fd < 0) return failed(fd, "open /dev/null");
      if (int r = ops_.char_device(fd, 1, 3); r != 0) {
        ops_.close_fd(fd);
        return failed(r, "/dev/null is not the character device 1:3");
      }
      null_fd_ = fd;
    }
    return bind_into(null_fd_, "", s, CreateAs::nothing, false, true);
  }

  // A new, empty named volume takes what the image has at the step's target (a directory), as
  // this namespace sees it, before it covers it: Docker's copy of an image path into a volume.
  // Nothing there, or not a directory: nothing is copied.
  bool copy_up(int volume, const MountStep& s) {
    int t = open_target(s.target, CreateAs::nothing);
    if (t == -ENOENT || t == -ENOTDIR) return true;
    if (t < 0) return failed(t, "resolve");
    int type = ops_.file_type(t);
    if (type != S_IFDIR) {
      ops_.close_fd(t);
      return type < 0 ? failed(type, "stat") : true;
    }
    int from = ops_.reopen_dir(t);
    ops_.close_fd(t);
    if (from < 0) return failed(from, "open the image's directory");
    int to = ops_.reopen_dir(volume);
    if (to < 0) {
      ops_.close_fd(from);
      return failed(to, "open the volume");
    }
    // Still empty: the next box of a --restart policy, or a box that started beside this one,
    // finds what the first wrote there and leaves it.
    if (!dir_empty(to)) {
      ops_.close_fd(from);
      ops_.close_fd(to);
      return true;
    }
    std::string where;
    int r = ops_.copy_tree(from, to, true, &where);
    ops_.close_fd(from);
    ops_.close_fd(to);
    return r == 0 || failed(r, "copy the image's files into the volume");
  }

  bool one(const MountStep& s) {
    switch (s.kind) {
      case MountStepKind::make_private: {
        // MS_REC|MS_PRIVATE on "/": nothing mounted in the box propagates to the host.
        int r = ops_.mount_host("none", "/", MS_REC | MS_PRIVATE, "");
        return r == 0 || failed(r, "mount");
      }
      case MountStepKind::scratch_tmpfs: {
        int r = ops_.mount_host("tmpfs", ctx_.scratch, MS_NOSUID | MS_NODEV, "mode=0700");
        if (r != 0) return failed(r, "mount");
        for (const char* d : {"/upper", "/work", "/root"}) {
          r = ops_.mkdir_host(ctx_.scratch + d, 0755);
          if (r != 0) return failed(r, "mkdir");
        }
        return true;
      }
      case MountStepKind::scratch_dirs: {
        for (const char* d : {"/upper", "/work", "/root"}) {
          int r = ops_.mkdir_host(ctx_.scratch + d, 0755);
          if (r != 0) return failed(r, "mkdir");
        }
        return true;
      }
      case MountStepKind::overlay_root: {
        // The layers are named through /proc/self/fd/N of directories opened here, not by their
        // host paths: overlay shows its options in the box's /proc/self/mountinfo, and the
        // image store's and the scratch dir's paths are the host's business.
        std::vector<int> fds;
        auto by_fd = [&](const std::string& path, std::string* out) {
          int fd = ops_.open_dir(path);
          if (fd < 0) return fd;
          fds.push_back(fd);
          *out += "/proc/self/fd/" + std::to_string(fd);
          return 0;
        };
        std::string base = "lowerdir=";
        int r = 0;
        size_t pos = 0;
        while (r == 0 && pos <= s.source.size()) {
          size_t next = s.source.find(':', pos);
          if (next == std::string::npos) next = s.source.size();
          if (pos != 0) base += ":";
          r = by_fd(s.source.substr(pos, next - pos), &base);
          pos = next + 1;
        }
        if (r == 0) {
          base += ",upperdir=";
          r = by_fd(ctx_.scratch + "/upper", &base);
        }
        if (r == 0) {
          base += ",workdir=";
          r = by_fd(ctx_.scratch + "/work", &base);
        }
        if (r == 0) {
          // userxattr keeps overlay's own bookkeeping in user.* xattrs, the only ones a user
          // namespace may set on the tmpfs upper; older kernels refuse the option.
          r = ops_.mount_host("overlay", root(), MS_NOSUID | MS_NODEV, base + ",userxattr");
          if (r == EINVAL) r = ops_.mount_host("overlay", root(), MS_NOSUID | MS_NODEV, base);
        }
        for (int fd : fds) ops_.close_fd(fd);
        return r == 0 || failed(r, r < 0 ? "open layer" : "mount");
      }
      case MountStepKind::proc:
        return mount_fs_at(s, "proc", kNoSuidDevExec, "", CreateAs::dir, false);
      case MountStepKind::mask_file:
        return mask_file(s);
      case MountStepKind::mask_dir:
        return mask_dir(s);
      case MountStepKind::secret_file: {
        int r = ops_.write_secret(root(), s.target, s.content, s.uid, s.gid);
        return r == 0 || failed(r, "write");
      }
      case MountStepKind::proc_write: {
        int r = ops_.write_proc_beneath(root(), s.target, s.content);
        return r == 0 || failed(r, r == EXDEV ? "open (not procfs)" : "write");
      }
      case MountStepKind::readonly_rebind: {
        int fd = open_target(s.target, CreateAs::nothing);
        if (fd < 0) return failed(fd, "resolve");
        int r = ops_.bind_at(fd, "", fd, true);
        ops_.close_fd(fd);
        return r == 0 || failed(r, "bind");
      }
      case MountStepKind::dev_tmpfs:
        return mount_fs_at(s, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m", CreateAs::dir, false);
      case MountStepKind::dev_node:
        return bind_into(-1, s.source, s, CreateAs::file, false, false);
      case MountStepKind::devpts: {
        if (!mount_fs_at(s, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620",
                         CreateAs::dir, false))
          return false;
        int dev = open_target("/dev", CreateAs::nothing);
        if (dev < 0) return failed(dev, "resolve");
        int r = ops_.symlink_at("pts/ptmx", dev, "ptmx");
        ops_.close_fd(dev);
        return r == 0 || failed(r, "symlink");
      }
      case MountStepKind::dev_symlinks: {
        int dev = open_target("/dev", CreateAs::nothing);
        if (dev < 0) return failed(dev, "resolve");
        static const char* const links[][2] = {{"/proc/self/fd", "fd"},
                                               {"/proc/self/fd/0", "stdin"},
                                               {"/proc/self/fd/1", "stdout"},
                                               {"/proc/self/fd/2", "stderr"}};
        int r = 0;
        for (const auto& l : links)
          if (r == 0) r = ops_.symlink_at(l[0], dev, l[1]);
        ops_.close_fd(dev);
        return r == 0 || failed(r, "symlink");
      }
      case MountStepKind::tmpfs:
        return mount_fs_at(s, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_data(s), CreateAs::dir, false);
      case MountStepKind::sysfs: {
        // Only possible when the box owns its network namespace, and a host may still refuse it
        // (EPERM/EACCES: a sysfs it does not fully show to a user namespace). Then /sys stays as
        // the image has it (normally an empty directory), never the host's, and the launcher
        // is told: the step is skipped, not done.
        int fd = open_target(s.target, CreateAs::dir);
        if (fd < 0) return failed(fd, "resolve");
        int r = ops_.mount_at("sysfs", "sysfs", fd, kNoSuidDevExec | MS_RDONLY, "");
        ops_.close_fd(fd);
        if (r == EPERM || r == EACCES) return skipped(r, "mount");
        return r == 0 || failed(r, "mount");
      }
      case MountStepKind::bind:
      case MountStepKind::device_grant: {
        // The parent opened and checked the source; here it is opened again by its canonical
        // path (no symlinks followed) so that the mount is this namespace's copy, and it must
        // still be the very inode the parent checked, or nothing is bound.
        const auto& fds = s.kind == MountStepKind::bind ? *ctx_.bind_fds : *ctx_.device_fds;
        int checked = fds.at(static_cast<size_t>(s.index));
        int src = ops_.open_host(s.source);
        if (src < 0) return failed(src, "open source");
        int r = ops_.same_inode(src, checked);
        if (r != 0) {
          ops_.close_fd(src);
          return failed(r, "source changed since it was checked");
        }
        struct stat st;
        if (::fstat(checked, &st) != 0) {
          ops_.close_fd(src);
          return failed(errno, "fstat");
        }
        CreateAs create = S_ISDIR(st.st_mode) ? CreateAs::dir : CreateAs::file;
        if (s.skip_unreachable) {
          int t = open_target(s.target, create);
          if (t == -EACCES || t == -EPERM || t == -EROFS) {
            ops_.close_fd(src);
            return skipped(-t, "resolve");
          }
          if (t >= 0) ops_.close_fd(t);
        }
        if (s.copy_up && !copy_up(src, s)) {
          ops_.close_fd(src);
          return false;
        }
        bool ok = bind_into(src, "", s, create, s.read_only, false);
        ops_.close_fd(src);
        return ok;
      }
      case MountStepKind::bind_file: {
        // The file goes on the scratch tmpfs (the box's, writable whoever owns the image), then
        // over the target. A target the image lacks is made as a mount point; where the box
        // cannot make it (a directory of an unmapped owner) the box goes on without the file,
        // and says so.
        const std::string rel = "/files" + s.target;
        int r = ops_.write_file(ctx_.scratch, rel, s.content, s.mode);
        if (r != 0) return failed(r, "write");
        int fd = open_target(s.target, CreateAs::file);
        if (fd == -EACCES || fd == -EPERM || fd == -EROFS) return skipped(-fd, "resolve");
        if (fd < 0) return failed(fd, "resolve");
        r = ops_.bind_at(-1, ctx_.scratch + rel, fd, s.read_only);
        ops_.close_fd(fd);
        return r == 0 || failed(r, "bind");
      }
      case MountStepKind::remount_root_ro: {
        int fd = open_target("/", CreateAs::nothing);
        if (fd < 0) return failed(fd, "resolve");
        int r = ops_.set_read_only(fd, false);
        ops_.close_fd(fd);
        return r == 0 || failed(r, "mount_setattr");
      }
      case MountStepKind::pivot_root: {
        int r = ops_.pivot(root());
        return r == 0 || failed(r, "pivot_root");
      }
      case MountStepKind::root_propagation:
      case MountStepKind::bind_root:
      case MountStepKind::config_mount:
      case MountStepKind::default_devices:
      case MountStepKind::config_device:
      case MountStepKind::dev_links:
      case MountStepKind::readonly_dev:
      case MountStepKind::hooks_before_enter:
      case MountStepKind::enter_root:
      case MountStepKind::sysctl:
      case MountStepKind::config_readonly:
      case MountStepKind::config_mask:
      case MountStepKind::root_readonly:
      case MountStepKind::final_propagation:
      case MountStepKind::oom_score_adj: {
        if (ctx_.config == nullptr) return failed(EINVAL, "a config-root step without its config");
        const char* what = "";
        int r = config_.run(s, &what, &f_->detail);
        return r == 0 || failed(r, what);
      }
    }
    return failed(EINVAL, "unknown step");
  }

  const MountContext& ctx_;
  MountOps& ops_;
  MountFailure* f_;
  SkipFn on_skip_;
  void* cookie_;
  const MountStep* step_ = nullptr;
  int mask_tree_ = -1;  // the first directory mask's tmpfs (its root), which later masks bind
  int null_fd_ = -1;    // the checked /dev/null every file mask binds
  ConfigRootSteps config_;  // the steps of a root a configuration describes
};

}  // namespace

bool execute_mount_plan(std::span<const MountStep> plan, const MountContext& ctx, MountOps& ops,
                        MountFailure* failure, SkipFn on_skip, void* cookie) {
  return Walker(ctx, ops, failure, on_skip, cookie).run(plan);
}

}  // namespace kern
