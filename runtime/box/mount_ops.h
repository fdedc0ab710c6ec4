// MountOps: the seam between the mount plan's executor and the kernel. The real implementation
// (mount_ops.cc) runs in the box's first process (the child, before pivot_root); tests use a
// recording fake (tests/unit/runtime_mount_exec_test.cc) to assert the exact sequence without
// privileges. Every call returns 0 or an errno, never throws, so the child cannot unwind.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kern {

enum class CreateAs { nothing, dir, file };

class MountOps {
 public:
  virtual ~MountOps() = default;
  // A new filesystem of `fstype` on the directory `target` (a host path: the scratch dir).
  virtual int mount_host(const std::string& fstype, const std::string& target, unsigned long flags,
                         const std::string& data) = 0;
  virtual int mkdir_host(const std::string& path, unsigned mode) = 0;
  // Opens `box_path` beneath the new root at `root` without leaving it through ".." or a
  // symlink, creating the last component as asked. Returns an O_PATH fd or -errno.
  virtual int resolve(const std::string& root, const std::string& box_path, CreateAs create) = 0;
  // A new filesystem on the mountpoint `target_fd`.
  virtual int mount_at(const std::string& fstype, const std::string& source, int target_fd,
                       unsigned long flags, const std::string& data) = 0;
  // A (recursive) bind of the tree at `source_fd` (or path `source` when source_fd < 0) onto
  // `target_fd`, read-only if asked.
  virtual int bind_at(int source_fd, const std::string& source, int target_fd, bool read_only) = 0;
  // Makes the mount whose root is `fd` read-only (and its submounts if `recursive`), keeping
  // its other flags.
  virtual int set_read_only(int fd, bool recursive) = 0;
  // Writes `content` as the regular file `box_path` beneath the directory `root` (the scratch
  // tmpfs; its parent directories made as needed, without leaving `root`), replacing what is
  // there: a symlink is replaced, never followed.
  virtual int write_file(const std::string& root, const std::string& box_path, const std::string& content,
                         unsigned mode) = 0;
  virtual int symlink_at(const std::string& target, int dir_fd, const std::string& name) = 0;
  // Opens a host path (before pivot_root) as O_PATH without following any symlink, so that the
  // mount it names is one of this namespace's own (open_tree refuses a mount of another
  // namespace, such as one reached through an fd the parent opened). Returns the fd or -errno.
  virtual int open_host(const std::string& path) = 0;
  // Opens a directory kern itself chose (a layer of its image store, the box's scratch dir) as
  // O_PATH|O_DIRECTORY, as the path says (symlinks followed). Returns the fd or -errno.
  virtual int open_dir(const std::string& path) = 0;
  // 0 when the two fds name the same inode (st_dev and st_ino), else EXDEV.
  virtual int same_inode(int a, int b) = 0;
  // 0 when `fd` is the character device major:minor, else ENODEV.
  virtual int char_device(int fd, unsigned major, unsigned minor) = 0;
  virtual int close_fd(int fd) = 0;
  // chdir into `new_root`, pivot_root(".", "."), detach the old root, chdir("/").
  virtual int pivot(const std::string& new_root) = 0;

  // What a root a configuration describes needs besides (config_root.h). Paths beneath `root`
  // resolve as resolve() does; fds are O_PATH unless said otherwise.
  //
  // `box_path` beneath `root` with no symlink followed at all (a proc or sysfs mount point, the
  // /dev/null a mask binds). The fd or -errno.
  virtual int resolve_no_symlinks(const std::string& root, const std::string& box_path) = 0;
  // The S_IFMT bits of what `fd` names, or -errno; host_file_type follows `path` as stat(2).
  virtual int file_type(int fd) = 0;
  virtual int host_file_type(const std::string& path) = 0;
  // 1 when `fd` is on a procfs, 0 when not.
  virtual int on_procfs(int fd) = 0;
  // mount(2) MS_BIND (| MS_REC) of the host path `source` onto `target_fd`.
  virtual int bind_host(const std::string& source, int target_fd, bool recursive) = 0;
  // The same, path onto path: root.path bound onto itself before anything is opened in it.
  virtual int bind_host_path(const std::string& source, const std::string& target, bool recursive) = 0;
  // A detached copy of the mount tree at `fd` (open_tree OPEN_TREE_CLONE), or -errno.
  virtual int clone_tree(int fd, bool recursive) = 0;
  // move_mount of the detached tree `tree` onto `target_fd`.
  virtual int move_tree(int tree, int target_fd) = 0;
  // A remount of the mount at `fd` with the MS_* flags a remount takes from `flags`: a bind
  // remount (MS_BIND, keeping what a user namespace may not clear: nosuid, nodev, ... of the
  // mount it inherited locked), or a file system's own (data given again).
  // At the path `path` when fd < 0 (the new "/", where no /proc/self/fd path may exist).
  virtual int remount(int fd, const std::string& path, unsigned long flags, const std::string& data, bool bind) = 0;
  // mount_setattr(2) of the mount at `fd` (and those below it when `recursive`).
  virtual int set_attr(int fd, uint64_t set, uint64_t clear, bool recursive) = 0;
  // The propagation (MS_SHARED, MS_SLAVE, ... | MS_REC) of the mount at `fd`, or at the host
  // path `path` when fd < 0.
  virtual int set_propagation(int fd, const std::string& path, unsigned long propagation) = 0;
  // A new empty read-only tmpfs onto `target_fd` (fsopen, fsmount, move_mount: no path).
  virtual int empty_tmpfs_onto(int target_fd) = 0;
  // The node `name` in the directory `dir_fd`, replacing what is there: mknodat with type and
  // mode, then the owner and the mode again (a umask, a chown's set-id clearing).
  virtual int make_node(int dir_fd, const std::string& name, unsigned type_and_mode, unsigned major,
                        unsigned minor, uid_t uid, gid_t gid) = 0;
  virtual int unlink_at(int dir_fd, const std::string& name) = 0;
  // tmpcopyup: the tree of the directory `from` copied into the directory `to` (readable fds:
  // reopen_dir; entries with
  // their modes, owners as far as this namespace can give them, and times); with `top`, `to`
  // also takes `from`'s own mode and owner. 0, or errno with the entry in `where`.
  virtual int copy_tree(int from, int to, bool top, std::string* where) = 0;
  // `fd` (an O_PATH fd of a directory) opened again for reading: the fd copy_tree takes.
  virtual int reopen_dir(int fd) = 0;
  // --no-pivot: each procfs and sysfs mounted outside `root` detached (or covered by an empty
  // read-only tmpfs), the root moved onto "/" and chroot'ed into, chdir("/").
  virtual int chroot_into(const std::string& root) = 0;
  // `value` written to `path` (under /proc) through a verified procfs.
  virtual int write_proc(const std::string& path, const std::string& value) = 0;
  // `value` written to the existing file `box_path` beneath `root` (no symlink followed), which
  // must be on procfs: the box's own /proc before it is entered (kern box --sysctl).
  virtual int write_proc_beneath(const std::string& root, const std::string& box_path, const std::string& value) = 0;
  // A new file `box_path` beneath `root` (its parent exists; nothing there yet, no symlink
  // followed) with `content`, mode 0400, owned by uid:gid: a secret on the box's tmpfs.
  virtual int write_secret(const std::string& root, const std::string& box_path, const std::string& content,
                           uint32_t uid, uint32_t gid) = 0;
  // Tells the launcher on `channel_fd` that the root is mounted and not yet entered, and waits
  // for its 'P' on `sync_fd` (its hooks ran).
  virtual int wait_for_launcher(int channel_fd, int sync_fd) = 0;
};

// The real thing. Child only.
MountOps& real_mount_ops();

}  // namespace kern
