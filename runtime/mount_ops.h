// MountOps: the seam between the mount plan's executor and the kernel. The real implementation
// (mount_ops.cc) runs in the box's first process (the child, before pivot_root); tests use a
// recording fake (tests/unit/runtime_mount_exec_test.cc) to assert the exact sequence without
// privileges. Every call returns 0 or an errno, never throws, so the child cannot unwind.
#pragma once

#include <sys/types.h>

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
};

// The real thing. Child only.
MountOps& real_mount_ops();

}  // namespace kern
