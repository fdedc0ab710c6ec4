// The system calls behind MountOps' config-root operations (mount_ops.h), one function each,
// for the real MountOps (mount_ops.cc) to forward to. Child only: they run in the box's first
// process, allocate only to build a path, never throw; each returns 0 (or an fd) or errno
// (-errno where an fd is returned).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kern::mount_calls {

int open_no_symlinks(int root_fd, const std::string& box_path);
int file_type(int fd);
int host_file_type(const std::string& path);
int on_procfs(int fd);
int bind_host(const std::string& source, const std::string& target, bool recursive);
int clone_tree(int fd, bool recursive);
int move_tree(int tree, int target_fd);
int remount(const std::string& target, unsigned long flags, const std::string& data, bool bind);
int set_attr(int fd, uint64_t set, uint64_t clear, bool recursive);
int set_propagation(const std::string& path, unsigned long propagation);
int empty_tmpfs_onto(int target_fd);
int make_node(int dir_fd, const std::string& name, unsigned type_and_mode, unsigned major, unsigned minor,
              uid_t uid, gid_t gid);
int chroot_into(const std::string& root);
int write_proc(const std::string& path, const std::string& value);
int wait_for_launcher(int channel_fd, int sync_fd);

// "/proc/self/fd/N": how mount(2) names the mount point an fd holds.
std::string fd_path(int fd);

}  // namespace kern::mount_calls
