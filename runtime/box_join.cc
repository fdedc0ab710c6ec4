// See box_join.h. Host side.
#include "runtime/box_join.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "runtime/sys/close_fds.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"

namespace kern {

pid_t first_child_of(pid_t pid) {
  std::string id = std::to_string(pid);
  auto text = sys::read_file(AT_FDCWD, "/proc/" + id + "/task/" + id + "/children", 4096);
  if (!text) return 0;
  return static_cast<pid_t>(std::atoi(text->c_str()));
}

Result<NamespaceHolder> open_namespace_holder(pid_t init_pid) {
  NamespaceHolder h;
  pid_t child = first_child_of(init_pid);
  if (child > 0) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
    // From here the pidfd names one process: if it is still init's child, it is in the box.
    if (fd >= 0 && sys::parent_pid(child) == init_pid) {
      h.pid = child;
      h.pidfd.reset(fd);
      return h;
    }
    if (fd >= 0) ::close(fd);
  }
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, init_pid, 0));
  if (fd < 0) return fail_errno("pidfd_open " + std::to_string(init_pid) + " (box init)");
  h.pid = init_pid;
  h.pidfd.reset(fd);
  return h;
}

Result<unsigned long long> namespaces_to_join(pid_t pid) {
  struct Kind {
    const char* file;
    unsigned long long flag;
  };
  static constexpr Kind kKinds[] = {{"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},     {"pid", CLONE_NEWPID},
                                    {"net", CLONE_NEWNET},   {"uts", CLONE_NEWUTS},    {"ipc", CLONE_NEWIPC},
                                    {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME}};
  unsigned long long out = 0;
  for (const auto& k : kKinds) {
    char mine[64] = {}, theirs[64] = {};
    std::string a = std::string("/proc/self/ns/") + k.file;
    std::string b = "/proc/" + std::to_string(pid) + "/ns/" + k.file;
    ssize_t n1 = ::readlink(a.c_str(), mine, sizeof mine - 1);
    if (n1 <= 0) continue;  // a kind this kernel does not have
    ssize_t n2 = ::readlink(b.c_str(), theirs, sizeof theirs - 1);
    if (n2 > 0) {
      if (std::string(mine, n1) != std::string(theirs, n2)) out |= k.flag;
      continue;
    }
    return fail_errno("readlink \"" + b + "\"");
  }
  return out;
}

int enter_box_raw(int pidfd, unsigned long long namespaces, int* keep, size_t n, const char** what) noexcept {
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    *what = "prctl PR_SET_DUMPABLE 0";
    return errno;
  }
  if (int r = sys::close_fds_except_raw(keep, n); r != 0) {
    *what = "close_range before joining the box";
    return r;
  }
  if (::chdir("/") != 0) {
    *what = "chdir /";
    return errno;
  }
  if (::setns(pidfd, static_cast<int>(namespaces)) != 0) {
    *what = "setns into the box's namespaces";
    return errno;
  }
  return 0;
}

}  // namespace kern
