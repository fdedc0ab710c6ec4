// See procfs.h.
#include "runtime/sys/procfs.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kern::sys {
namespace {

constexpr ino_t kProcRootIno = 1;

bool on_procfs(int fd) {
  struct statfs sf;
  return ::fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

}  // namespace

int open_procfs_file(const char* rel, int flags) noexcept {
  int root = ::open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0) return -errno;
  struct stat st;
  if (::fstat(root, &st) != 0 || st.st_ino != kProcRootIno || !on_procfs(root)) {
    ::close(root);
    return -EXDEV;
  }
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, root, rel, &how, sizeof how);
  int err = errno;
  ::close(root);
  if (fd < 0) return -err;
  if (!on_procfs(static_cast<int>(fd))) {
    ::close(static_cast<int>(fd));
    return -EXDEV;
  }
  return static_cast<int>(fd);
}

}  // namespace kern::sys
