// The real MountOps: runs in the box's first process, in its own user and mount namespaces,
// before pivot_root. Binds and read-only flags use the fd-based mount API (open_tree,
// mount_setattr, move_mount: Linux 5.12+) so that the locked flags a user namespace inherits
// from the host mounts are kept rather than tripping EPERM on a classic remount.
#include "runtime/box/mount_ops.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/box/mount_ops_config.h"
#include "runtime/sys/copy_tree.h"

namespace kern {
namespace {

std::string fdp(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

int err() { return errno != 0 ? errno : EIO; }

// `content` written whole to `fd`: 0 or the errno.
int write_whole(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? err() : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

class RealMountOps final : public MountOps {
 public:
  int mount_host(const std::string& fstype, const std::string& target, unsigned long flags,
                 const std::string& data) override {
    forget_parent();
    if (::mount(fstype.c_str(), target.c_str(), fstype.c_str(), flags,
                data.empty() ? nullptr : data.c_str()) != 0)
      return err();
    return 0;
  }

  int mkdir_host(const std::string& path, unsigned mode) override {
    if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return err();
    return 0;
  }

  int resolve(const std::string& root, const std::string& box_path, CreateAs create) override {
    int r = open_root(root);
    if (r != 0) return r;
    if (create == CreateAs::file) {
      int f = create_in_cached_parent(box_path);
      if (f >= 0) return f;
      f = make_file_remembering_parent(box_path);
      if (f != -1) return f;
    }
    return resolve_from(root_fd_, box_path, create);
  }

  int write_file(const std::string& root, const std::string& box_path, const std::string& content,
                 unsigned mode) override {
    int r = open_root(root);
    if (r != 0) return -r;
    size_t slash = box_path.find_last_of('/');
    if (slash == std::string::npos) return EINVAL;
    std::string leaf = box_path.substr(slash + 1);
    if (leaf.empty() || leaf == "." || leaf == "..") return EINVAL;
    int dfd = open_dir(root_fd_, slash == 0 ? "/" : box_path.substr(0, slash));
    if (dfd < 0) return -dfd;
    const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
    int f = ::openat(dfd, leaf.c_str(), flags, mode);
    if (f < 0 && errno == ELOOP) {  // a symlink (/etc/resolv.conf -> ../run/...): replaced
      if (::unlinkat(dfd, leaf.c_str(), 0) == 0) f = ::openat(dfd, leaf.c_str(), flags | O_EXCL, mode);
    }
    int e = f < 0 ? err() : 0;
    ::close(dfd);
    if (f < 0) return e;
    if (e == 0) e = write_whole(f, content);
    if (e == 0 && ::fchmod(f, mode) != 0) e = err();
    ::close(f);
    return e;
  }

  int mount_at(const std::string& fstype, const std::string& source, int target_fd,
               unsigned long flags, const std::string& data) override {
    forget_parent();
    if (::mount(source.c_str(), fdp(target_fd).c_str(), fstype.c_str(), flags,
                data.empty() ? nullptr : data.c_str()) != 0)
      return err();
    return 0;
  }

  int bind_at(int source_fd, const std::string& source, int target_fd, bool read_only) override {
    // A bind onto the file just made in the remembered directory leaves that directory as it
    // is; any other target may be (or cover) it.
    if (target_fd != made_file_fd_) forget_parent();
    made_file_fd_ = -1;
    int tree;
    if (source_fd >= 0)
      tree = static_cast<int>(::syscall(SYS_open_tree, source_fd, "",
                                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    else
      tree = static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, source.c_str(),
                                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
    if (tree < 0) return err();
    if (read_only) {
      int r = set_read_only(tree, true);
      if (r != 0) {
        ::close(tree);
        return r;
      }
    }
    int r = 0;
    if (::syscall(SYS_move_mount, tree, "", target_fd, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
      r = err();
    ::close(tree);
    return r;
  }

  int set_read_only(int fd, bool recursive) override {
    forget_parent();
    struct mount_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.attr_set = MOUNT_ATTR_RDONLY;
    unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0u);
    if (::syscall(SYS_mount_setattr, fd, "", flags, &attr, sizeof attr) != 0)
      return err();
    return 0;
  }

  int symlink_at(const std::string& target, int dir_fd, const std::string& name) override {
    if (::symlinkat(target.c_str(), dir_fd, name.c_str()) != 0 && errno != EEXIST) return err();
    return 0;
  }

  int open_host(const std::string& path) override {
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
    return fd >= 0 ? static_cast<int>(fd) : -err();
  }

  int open_dir(const std::string& path) override {
    int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -err();
  }

  int same_inode(int a, int b) override {
    struct stat sa, sb;
    if (::fstat(a, &sa) != 0 || ::fstat(b, &sb) != 0) return err();
    return (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) ? 0 : EXDEV;
  }

  int char_device(int fd, unsigned maj, unsigned min) override {
    struct stat st;
    if (::fstat(fd, &st) != 0) return err();
    return S_ISCHR(st.st_mode) && major(st.st_rdev) == maj && minor(st.st_rdev) == min ? 0 : ENODEV;
  }

  int close_fd(int fd) override { return ::close(fd) == 0 ? 0 : err(); }

  int pivot(const std::string& new_root) override {
    forget_parent();
    if (root_fd_ >= 0) ::close(root_fd_);
    root_fd_ = -1;
    if (::chdir(new_root.c_str()) != 0) return err();
    // pivot_root(".", ".") stacks the old root under the new one; detaching "." afterwards
    // removes it without needing a directory for it inside the box.
    if (::syscall(SYS_pivot_root, ".", ".") != 0) return err();
    // The old root is stacked on "/" now and goes. It propagates nowhere: the first step of
    // either plan made "/" rprivate (a kern box) or rprivate/rslave (a config's
    // root_propagation), so no MS_SLAVE is needed before the detach (runc's extra call).
    if (::umount2(".", MNT_DETACH) != 0) return err();
    if (::chdir("/") != 0) return err();
    return 0;
  }

  int resolve_no_symlinks(const std::string& root, const std::string& box_path) override {
    int r = open_root(root);
    return r != 0 ? r : mount_calls::open_no_symlinks(root_fd_, box_path);
  }
  int file_type(int fd) override { return mount_calls::file_type(fd); }
  int host_file_type(const std::string& path) override { return mount_calls::host_file_type(path); }
  int on_procfs(int fd) override { return mount_calls::on_procfs(fd); }
  int bind_host(const std::string& source, int target_fd, bool recursive) override {
    forget_parent();
    return mount_calls::bind_host(source, fdp(target_fd), recursive);
  }
  int bind_host_path(const std::string& source, const std::string& target, bool recursive) override {
    forget_parent();
    return mount_calls::bind_host(source, target, recursive);
  }
  int clone_tree(int fd, bool recursive) override { return mount_calls::clone_tree(fd, recursive); }
  int move_tree(int tree, int target_fd) override {
    forget_parent();
    return mount_calls::move_tree(tree, target_fd);
  }
  int remount(int fd, const std::string& path, unsigned long flags, const std::string& data, bool bind) override {
    forget_parent();
    return mount_calls::remount(fd >= 0 ? fdp(fd) : path, flags, data, bind);
  }
  int set_attr(int fd, uint64_t set, uint64_t clear, bool recursive) override {
    forget_parent();
    return mount_calls::set_attr(fd, set, clear, recursive);
  }
  int set_propagation(int fd, const std::string& path, unsigned long propagation) override {
    return mount_calls::set_propagation(fd >= 0 ? fdp(fd) : path, propagation);
  }
  int empty_tmpfs_onto(int target_fd) override {
    forget_parent();
    return mount_calls::empty_tmpfs_onto(target_fd);
  }
  int make_node(int dir_fd, const std::string& name, unsigned type_and_mode, unsigned maj, unsigned min, uid_t uid,
                gid_t gid) override {
    return mount_calls::make_node(dir_fd, name, type_and_mode, maj, min, uid, gid);
  }
  int unlink_at(int dir_fd, const std::string& name) override {
    return ::unlinkat(dir_fd, name.c_str(), 0) == 0 ? 0 : err();
  }
  int copy_tree(int from, int to, bool top, std::string* where) override {
    return sys::copy_tree(from, to, top, where);
  }
  int reopen_dir(int fd) override {
    int d = ::openat(fd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    return d >= 0 ? d : -err();
  }
  int chroot_into(const std::string& root) override {
    forget_parent();
    if (root_fd_ >= 0) ::close(root_fd_);
    root_fd_ = -1;
    return mount_calls::chroot_into(root);
  }
  int write_proc(const std::string& path, const std::string& value) override {
    return mount_calls::write_proc(path, value);
  }
  int write_secret(const std::string& root, const std::string& box_path, const std::string& content, uint32_t uid,
                   uint32_t gid) override {
    int r = open_root(root);
    if (r != 0) return -r;
    // The parent (the tmpfs at /run/secrets) resolved beneath the root, the file made new in it.
    size_t slash = box_path.find_last_of('/');
    if (slash == std::string::npos) return EINVAL;
    int dir = open_dir(root_fd_, slash == 0 ? "/" : box_path.substr(0, slash));
    if (dir < 0) return -dir;
    int fd = ::openat(dir, box_path.c_str() + slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
    int oe = fd < 0 ? err() : 0;
    ::close(dir);
    if (fd < 0) return oe;
    int f = fd;
    int e = write_whole(f, content);
    if (e == 0 && ::fchown(f, uid, gid) != 0) e = err();
    if (e == 0 && ::fchmod(f, 0400) != 0) e = err();
    ::close(f);
    return e;
  }
  int write_proc_beneath(const std::string& root, const std::string& box_path, const std::string& value) override {
    int r = open_root(root);
    if (r != 0) return -r;
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, root_fd_, box_path.c_str(), &how, sizeof how);
    if (fd < 0) return err();
    int e = mount_calls::on_procfs(static_cast<int>(fd)) == 0 ? EXDEV : 0;
    if (e == 0) {
      ssize_t n = ::write(static_cast<int>(fd), value.data(), value.size());
      e = n == static_cast<ssize_t>(value.size()) ? 0 : (n < 0 ? err() : EIO);
    }
    ::close(static_cast<int>(fd));
    return e;
  }
  int wait_for_launcher(int channel_fd, int sync_fd) override {
    return mount_calls::wait_for_launcher(channel_fd, sync_fd);
  }

 private:
  int root_fd_ = -1;
  std::string root_path_;
  // The directory the last file mount point was made in (/dev, for the run of dev-node steps)
  // while no mount has been made since: the next file there is created through it directly
  // instead of two lookups through the root. Forgotten by every mount but a bind onto the file
  // just made (made_file_fd_), which cannot change the directory.
  std::string parent_path_;
  int parent_fd_ = -1;
  int made_file_fd_ = -1;

  static std::string parent_part(const std::string& box_path) {
    size_t slash = box_path.find_last_of('/');
    if (slash == std::string::npos) return {};
    return slash == 0 ? "/" : box_path.substr(0, slash);
  }

  void forget_parent() {
    if (parent_fd_ >= 0) ::close(parent_fd_);
    parent_fd_ = -1;
    parent_path_.clear();
    made_file_fd_ = -1;
  }

  // resolve_from's way for a file mount point, keeping the directory when the file is made in
  // it: the existing path's fd, or the new file's, or -errno; -1: not made here (resolve_from
  // then goes the long way, e.g. for a name that appeared meanwhile).
  int make_file_remembering_parent(const std::string& box_path) {
    long fd = open_in_root(root_fd_, box_path, O_PATH | O_CLOEXEC);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != ENOENT) return -err();
    std::string parent = parent_part(box_path);
    std::string leaf = box_path.substr(box_path.find_last_of('/') + 1);
    if (parent.empty() || leaf.empty() || leaf == "." || leaf == "..") return -1;
    int dfd = open_dir(root_fd_, parent);
    if (dfd < 0) return dfd;
    int f = ::openat(dfd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (f < 0) {
      ::close(dfd);
      return -1;
    }
    forget_parent();
    parent_fd_ = dfd;
    parent_path_ = parent;
    made_file_fd_ = f;
    return f;
  }

  // The file mount point `box_path` made in the remembered directory: its fd, or -1 (not that
  // directory, or the name exists: the caller resolves it the long way, as for any path).
  int create_in_cached_parent(const std::string& box_path) {
    made_file_fd_ = -1;
    if (parent_fd_ < 0 || parent_part(box_path) != parent_path_) return -1;
    std::string leaf = box_path.substr(box_path.find_last_of('/') + 1);
    if (leaf.empty() || leaf == "." || leaf == "..") return -1;
    int f = ::openat(parent_fd_, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (f >= 0) made_file_fd_ = f;
    return f;
  }

  // The new root is opened once (after the overlay is on it) and reused for every step.
  // 0 or -errno.
  int open_root(const std::string& root) {
    if (root_fd_ < 0 || root != root_path_) {
      forget_parent();
      if (root_fd_ >= 0) ::close(root_fd_);
      root_fd_ = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root_fd_ < 0) return -err();
      root_path_ = root;
    }
    return 0;
  }

  // openat2 of `box_path` with ".." and symlinks kept inside the root at `rootfd` and no magic
  // links; the fd or -1 with errno.
  static long open_in_root(int rootfd, const std::string& box_path, int flags) {
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = static_cast<uint64_t>(flags);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    return ::syscall(SYS_openat2, rootfd, box_path.c_str(), &how, sizeof how);
  }

  // A directory inside the root as a real (not O_PATH) fd, for mkdirat and openat(O_CREAT);
  // made with its missing parents when it does not exist.
  static int open_dir(int rootfd, const std::string& box_path) {
    long fd = open_in_root(rootfd, box_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != ENOENT) return -err();
    int pfd = resolve_from(rootfd, box_path, CreateAs::dir);
    if (pfd < 0) return pfd;
    int dfd = ::openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(pfd);
    return dfd >= 0 ? dfd : -err();
  }

  // Walks `box_path` one component at a time from `rootfd`: each component is opened with
  // RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS so that ".." and absolute symlinks stay inside the
  // root; a missing last component is created as asked (intermediate ones as directories).
  static int resolve_from(int rootfd, const std::string& box_path, CreateAs create) {
    long fd = open_in_root(rootfd, box_path, O_PATH | O_CLOEXEC);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != ENOENT || create == CreateAs::nothing) return -err();
    // Create missing parents then the last component.
    size_t slash = box_path.find_last_of('/');
    std::string parent = slash == 0 ? "/" : box_path.substr(0, slash);
    std::string leaf = box_path.substr(slash + 1);
    if (leaf.empty() || leaf == "." || leaf == "..") return -EINVAL;
    int dfd = open_dir(rootfd, parent);
    if (dfd < 0) return dfd;
    int r = 0;
    if (create == CreateAs::dir) {
      if (::mkdirat(dfd, leaf.c_str(), 0755) != 0 && errno != EEXIST) r = -err();
    } else {
      int f = ::openat(dfd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (f >= 0) {
        // The new empty file is the mount point: its fd serves as well as an O_PATH one.
        ::close(dfd);
        return f;
      }
      if (errno != EEXIST) r = -err();
    }
    if (r == 0) {
      int f = ::openat(dfd, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
      r = f >= 0 ? f : -err();
    }
    ::close(dfd);
    return r;
  }
};

}  // namespace

MountOps& real_mount_ops() {
  static RealMountOps ops;
  return ops;
}

}  // namespace kern
