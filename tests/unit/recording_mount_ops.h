// A recording fake of MountOps for the mount walker's unit tests: every call becomes a line of
// `calls`, in order; resolve() hands out increasing fake fds and fails for paths in `missing`.
#pragma once

#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/box/mount_ops.h"

namespace kern {

class RecordingOps final : public MountOps {
 public:
  std::vector<std::string> calls;
  std::vector<std::string> missing;
  std::vector<std::string> refused;  // resolve() gives EACCES
  int fail_mount_of = -1;  // fail the Nth mount_at with EPERM
  int next_fd = 100;
  int mounts = 0;
  int fail_fstype_errno = 0;  // with fail_fstype: the errno mount_at gives for that fstype
  std::string fail_fstype;
  std::string overlay_data;
  int next_dir_fd = 500;

  int mount_host(const std::string& fstype, const std::string& target, unsigned long,
                 const std::string& data) override {
    if (fstype == "overlay") overlay_data = data;
    calls.push_back("mount_host " + fstype + " " + target + (data.find("userxattr") != std::string::npos ? " userxattr" : ""));
    return 0;
  }
  int open_dir(const std::string& path) override {
    calls.push_back("open_dir " + path);
    return next_dir_fd++;
  }
  int mkdir_host(const std::string& path, unsigned) override {
    calls.push_back("mkdir " + path);
    return 0;
  }
  int resolve(const std::string& root, const std::string& box_path, CreateAs create) override {
    if (listed(absent, box_path)) {
      if (create == CreateAs::nothing) {
        calls.push_back("resolve " + root + " " + box_path + ": ENOENT");
        return -ENOENT;
      }
      absent.erase(std::find(absent.begin(), absent.end(), box_path));
    }
    int fd = resolve_recorded(root, box_path, create);
    if (fd >= 0) {
      paths[fd] = box_path;
      handed.push_back(fd);
    }
    return fd;
  }
  int resolve_recorded(const std::string& root, const std::string& box_path, CreateAs create) {
    for (const auto& m : refused)
      if (m == box_path) {
        calls.push_back("resolve " + box_path + " EACCES");
        return -EACCES;
      }
    for (const auto& m : missing)
      if (m == box_path) {
        calls.push_back("resolve " + box_path + " ENOENT");
        return -ENOENT;
      }
    calls.push_back("resolve " + root + " " + box_path + (create == CreateAs::dir ? " dir" : create == CreateAs::file ? " file" : ""));
    return next_fd++;
  }
  int mount_at(const std::string& fstype, const std::string& source, int fd, unsigned long flags,
               const std::string& data) override {
    calls.push_back("mount_at " + fstype + " fd" + std::to_string(fd) +
                    (detailed ? " source=" + source + " " + flag_names(flags) + (data.empty() ? "" : " data=" + data) : ""));
    if (mounts++ == fail_mount_of) return EPERM;
    if (fstype == fail_fstype) return fail_fstype_errno;
    return 0;
  }
  int bind_at(int source_fd, const std::string& source, int target_fd, bool ro) override {
    calls.push_back("bind " + (source_fd >= 0 ? "fd" + std::to_string(source_fd) : source) + " fd" +
                    std::to_string(target_fd) + (ro ? " ro" : ""));
    return 0;
  }
  int set_read_only(int fd, bool recursive) override {
    calls.push_back("ro fd" + std::to_string(fd) + (recursive ? " rec" : ""));
    return 0;
  }
  int write_file(const std::string& root, const std::string& box_path, const std::string& content,
                 unsigned mode) override {
    calls.push_back("write " + root + " " + box_path + " " + std::to_string(content.size()) + " bytes mode " +
                    std::to_string(mode));
    return 0;
  }
  int symlink_at(const std::string& target, int, const std::string& name) override {
    calls.push_back("symlink " + name + " -> " + target);
    return 0;
  }
  int open_host(const std::string& path) override {
    calls.push_back("open_host " + path);
    return next_fd++;
  }
  int same_inode(int, int) override { return 0; }
  int not_null_device = 0;  // char_device's answer (ENODEV: the host's /dev/null is something else)
  int char_device(int fd, unsigned maj, unsigned min) override {
    calls.push_back("char_device fd" + std::to_string(fd) + " " + std::to_string(maj) + ":" + std::to_string(min));
    return not_null_device;
  }
  std::vector<int> closed;
  int close_fd(int fd) override {
    closed.push_back(fd);
    return 0;
  }
  int pivot(const std::string& new_root) override {
    calls.push_back("pivot " + new_root);
    return 0;
  }

  // The config-root operations. `detailed` adds mount_at's source, flags and data to its line.
  bool detailed = false;
  std::vector<std::string> absent;  // box paths missing until a resolve() makes them
  std::vector<int> handed;          // every fd resolve, clone_tree and reopen_dir handed out
  std::map<int, std::string> paths;        // fd -> the box path resolve() gave it for
  std::vector<std::string> regular_files;  // box or host paths that file_type() calls files
  std::vector<std::string> procfs_paths;   // box paths on_procfs() says are on a procfs

  static std::string flag_names(unsigned long f) {
    static const std::pair<unsigned long, const char*> kNames[] = {
        {MS_RDONLY, "ro"}, {MS_NOSUID, "nosuid"}, {MS_NODEV, "nodev"}, {MS_NOEXEC, "noexec"},
        {MS_STRICTATIME, "strictatime"}, {MS_RELATIME, "relatime"}, {MS_REC, "rec"}, {MS_PRIVATE, "private"},
        {MS_SLAVE, "slave"}, {MS_SHARED, "shared"}};
    std::string out;
    for (const auto& [bit, name] : kNames)
      if (f & bit) out += (out.empty() ? "" : ",") + std::string(name);
    return out.empty() ? "-" : out;
  }
  std::string fd_name(int fd) const {
    auto it = paths.find(fd);
    return "fd" + std::to_string(fd) + (it == paths.end() ? "" : "(" + it->second + ")");
  }
  bool listed(const std::vector<std::string>& v, const std::string& p) const {
    return std::find(v.begin(), v.end(), p) != v.end();
  }
  int resolve_no_symlinks(const std::string& root, const std::string& box_path) override {
    if (listed(missing, box_path) || listed(absent, box_path)) {
      calls.push_back("resolve_no_symlinks " + root + " " + box_path + ": ENOENT");
      return -ENOENT;
    }
    calls.push_back("resolve_no_symlinks " + root + " " + box_path);
    paths[next_fd] = box_path;
    handed.push_back(next_fd);
    return next_fd++;
  }
  int file_type(int fd) override {
    auto it = paths.find(fd);
    return it != paths.end() && listed(regular_files, it->second) ? S_IFREG : S_IFDIR;
  }
  int host_file_type(const std::string& path) override { return listed(regular_files, path) ? S_IFREG : S_IFDIR; }
  int on_procfs(int fd) override {
    auto it = paths.find(fd);
    return it != paths.end() && listed(procfs_paths, it->second) ? 1 : 0;
  }
  int bind_host(const std::string& source, int target_fd, bool recursive) override {
    calls.push_back("bind_host " + source + " " + fd_name(target_fd) + (recursive ? " rec" : ""));
    return 0;
  }
  int bind_host_path(const std::string& source, const std::string& target, bool recursive) override {
    calls.push_back("bind_host_path " + source + " " + target + (recursive ? " rec" : ""));
    return 0;
  }
  int clone_tree(int fd, bool recursive) override {
    calls.push_back("clone_tree " + fd_name(fd) + (recursive ? " rec" : ""));
    handed.push_back(next_fd);
    return next_fd++;
  }
  int move_tree(int tree, int target_fd) override {
    calls.push_back("move_tree fd" + std::to_string(tree) + " " + fd_name(target_fd));
    return 0;
  }
  int remount(int fd, const std::string& path, unsigned long flags, const std::string& data, bool bind) override {
    calls.push_back("remount " + (fd >= 0 ? fd_name(fd) : path) + " " + flag_names(flags) +
                    (data.empty() ? "" : " data=" + data) + (bind ? " bind" : ""));
    return 0;
  }
  static std::string attr_names(uint64_t a) {
    static const std::pair<uint64_t, const char*> kNames[] = {
        {MOUNT_ATTR_RDONLY, "ro"}, {MOUNT_ATTR_NOSUID, "nosuid"}, {MOUNT_ATTR_NODEV, "nodev"}, {MOUNT_ATTR_NOEXEC, "noexec"}};
    std::string out;
    for (const auto& [bit, name] : kNames)
      if (a & bit) out += (out.empty() ? "" : ",") + std::string(name);
    return out.empty() ? "-" : out;
  }
  int set_attr(int fd, uint64_t set, uint64_t clear, bool recursive) override {
    calls.push_back("set_attr " + fd_name(fd) + " +" + attr_names(set) + " -" + attr_names(clear) +
                    (recursive ? " rec" : ""));
    return 0;
  }
  int set_propagation(int fd, const std::string& path, unsigned long propagation) override {
    calls.push_back("propagation " + (fd >= 0 ? fd_name(fd) : path) + " " + flag_names(propagation));
    return 0;
  }
  int empty_tmpfs_onto(int target_fd) override {
    calls.push_back("empty_tmpfs " + fd_name(target_fd));
    return 0;
  }
  int make_node(int dir_fd, const std::string& name, unsigned type_and_mode, unsigned maj, unsigned min, uid_t uid,
                gid_t gid) override {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", type_and_mode & 07777);
    calls.push_back("mknod " + fd_name(dir_fd) + " " + name + " " + (S_ISBLK(type_and_mode) ? "b" : "c") + " " +
                    std::to_string(maj) + ":" + std::to_string(min) + " " + mode + " " + std::to_string(uid) + ":" +
                    std::to_string(gid));
    auto dir = paths.find(dir_fd);
    if (dir != paths.end()) {
      auto made = std::find(absent.begin(), absent.end(), (dir->second == "/" ? "" : dir->second) + "/" + name);
      if (made != absent.end()) absent.erase(made);
    }
    return 0;
  }
  int unlink_at(int dir_fd, const std::string& name) override {
    calls.push_back("unlink " + fd_name(dir_fd) + " " + name);
    return 0;
  }
  int copy_tree(int from, int to, bool top, std::string*) override {
    calls.push_back("copy_tree fd" + std::to_string(from) + " fd" + std::to_string(to) + (top ? " top" : ""));
    return 0;
  }
  int reopen_dir(int fd) override {
    calls.push_back("reopen_dir " + fd_name(fd));
    handed.push_back(next_fd);
    return next_fd++;
  }
  int chroot_into(const std::string& root) override {
    calls.push_back("chroot " + root);
    return 0;
  }
  int write_proc(const std::string& path, const std::string& value) override {
    calls.push_back("write_proc " + path + " " + value);
    return 0;
  }
  int write_secret(const std::string& root, const std::string& box_path, const std::string& content, uint32_t uid,
                   uint32_t gid) override {
    calls.push_back("write_secret " + root + " " + box_path + " " + std::to_string(content.size()) + " bytes " +
                    std::to_string(uid) + ":" + std::to_string(gid));
    return 0;
  }
  int write_proc_beneath(const std::string& root, const std::string& box_path, const std::string& value) override {
    calls.push_back("write_proc_beneath " + root + " " + box_path + " " + value);
    return 0;
  }
  int wait_for_launcher(int channel_fd, int sync_fd) override {
    calls.push_back("wait_for_launcher channel=" + std::to_string(channel_fd) + " sync=" + std::to_string(sync_fd));
    return 0;
  }
};


}  // namespace kern
