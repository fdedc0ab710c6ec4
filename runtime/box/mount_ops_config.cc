// The config-root system calls of the real MountOps; see mount_ops_config.h.
#include "runtime/box/mount_ops_config.h"

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

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/channel.h"
#include "runtime/sys/mountinfo.h"
#include "runtime/sys/procfs.h"

namespace kern::mount_calls {
namespace {

int err() { return errno != 0 ? errno : EIO; }

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

// --no-pivot leaves the caller's mounts in the container's mount namespace under the moved
// root: a procfs or sysfs there is a fully visible one, which lets a nested user namespace mount
// a bare procfs (runc's no_pivot.bats). Each one outside the root is detached first (deepest
// first), or covered by an empty read-only tmpfs where it cannot be, as runc does.
int hide_outside_proc_and_sys(const std::string& root_path) {
  char real[PATH_MAX];  // as mountinfo names it: the root's real path
  if (::realpath(root_path.c_str(), real) == nullptr) return err();
  const std::string root = real;
  int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err();
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
      return err();
  }
  return 0;
}

}  // namespace

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

int open_no_symlinks(int root_fd, const std::string& box_path) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
  std::string rel = box_path;
  while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  long fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
  return fd < 0 ? -err() : static_cast<int>(fd);
}

int file_type(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 ? static_cast<int>(st.st_mode & S_IFMT) : -err();
}

int host_file_type(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & S_IFMT) : -err();
}

int on_procfs(int fd) {
  struct statfs sf;
  return ::fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC ? 1 : 0;
}

int bind_host(const std::string& source, const std::string& target, bool recursive) {
  return ::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | (recursive ? MS_REC : 0), nullptr) == 0 ? 0 : err();
}

int clone_tree(int fd, bool recursive) {
  long t = ::syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0));
  return t < 0 ? -err() : static_cast<int>(t);
}

int move_tree(int tree, int target_fd) {
  return ::syscall(SYS_move_mount, tree, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0 ? 0
                                                                                                                 : err();
}

int remount(const std::string& target, unsigned long flags, const std::string& data, bool bind) {
  if (!bind) {
    return ::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | (flags & kRemountable),
                   data.empty() ? nullptr : data.c_str()) == 0 ? 0 : err();
  }
  unsigned long f = MS_BIND | MS_REMOUNT | (flags & kRemountable);
  if (::mount(nullptr, target.c_str(), nullptr, f, nullptr) == 0) return 0;
  if (errno != EPERM) return err();
  return ::mount(nullptr, target.c_str(), nullptr, f | kept_flags(target), nullptr) == 0 ? 0 : err();
}

int set_attr(int fd, uint64_t set, uint64_t clear, bool recursive) {
  struct mount_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.attr_set = set;
  attr.attr_clr = clear;
  unsigned at = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0u);
  return ::syscall(SYS_mount_setattr, fd, "", at, &attr, sizeof attr) == 0 ? 0 : err();
}

int set_propagation(const std::string& path, unsigned long propagation) {
  return ::mount(nullptr, path.c_str(), nullptr, propagation, nullptr) == 0 ? 0 : err();
}

int empty_tmpfs_onto(int target_fd) {
  int fs = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
  if (fs < 0) return err();
  int r = 0;
  if (::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) != 0 ||
      ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    r = err();
  int mnt = -1;
  if (r == 0) {
    mnt = static_cast<int>(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (mnt < 0) r = err();
  }
  if (r == 0) r = move_tree(mnt, target_fd);
  if (mnt >= 0) ::close(mnt);
  ::close(fs);
  return r;
}

int make_node(int dir_fd, const std::string& name, unsigned type_and_mode, unsigned major, unsigned minor, uid_t uid,
              gid_t gid) {
  (void)::unlinkat(dir_fd, name.c_str(), 0);
  if (::mknodat(dir_fd, name.c_str(), type_and_mode, makedev(major, minor)) != 0) return err();
  if (::fchownat(dir_fd, name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) return err();
  if (::fchmodat(dir_fd, name.c_str(), type_and_mode & 07777, 0) != 0) return err();
  return 0;
}

int chroot_into(const std::string& root) {
  if (::chdir(root.c_str()) != 0) return err();
  if (int e = hide_outside_proc_and_sys(root); e != 0) return e;
  if (::mount(root.c_str(), "/", nullptr, MS_MOVE, nullptr) != 0) return err();
  if (::chroot(".") != 0) return err();
  return ::chdir("/") == 0 ? 0 : err();
}

int write_proc(const std::string& path, const std::string& value) {
  // Opened through a verified procfs, so a file bound over the target (or a /proc that is not
  // procfs) fails instead of taking the write.
  int fd = sys::open_procfs_file(path.c_str() + std::strlen("/proc/"), O_WRONLY);
  if (fd < 0) return -fd;
  ssize_t n = ::write(fd, value.data(), value.size());
  int r = n == static_cast<ssize_t>(value.size()) ? 0 : (n < 0 ? err() : EIO);
  ::close(fd);
  return r;
}

int wait_for_launcher(int channel_fd, int sync_fd) {
  send_before_pivot(channel_fd);
  char go = 0;
  ssize_t n;
  do n = ::read(sync_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  return n == 1 && go == 'P' ? 0 : (n < 0 ? err() : EPIPE);
}

}  // namespace kern::mount_calls
