// copy_tree: a directory's entries copied into another directory (tmpcopyup), see copy_tree.h.
#include "runtime/sys/copy_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/sys/fdio.h"

namespace kern::sys {
namespace {

int copy_dir(int from, int to, std::string& where);

int copy_entry(int from, int to, const char* name, std::string& where) {
  struct stat st;
  if (::fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return where = name, errno;
  int r = 0;
  if (S_ISDIR(st.st_mode)) {
    if (::mkdirat(to, name, 0700) != 0 && errno != EEXIST) return where = name, errno;
    int sf = ::openat(from, name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (sf < 0) return where = name, errno;
    int df = ::openat(to, name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (df < 0) {
      r = errno;
      ::close(sf);
      return where = name, r;
    }
    std::string inner;
    r = copy_dir(sf, df, inner);
    if (r != 0) where = std::string(name) + "/" + inner;
    ::close(sf);
    ::close(df);
  } else if (S_ISREG(st.st_mode)) {
    int sf = ::openat(from, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (sf < 0) return where = name, errno;
    int df = ::openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (df < 0) {
      r = errno;
      ::close(sf);
      return where = name, r;
    }
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(sf, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n < 0) r = errno;
        break;
      }
      r = sys::write_all_raw(df, buf, static_cast<size_t>(n));
      if (r != 0) break;
    }
    ::close(sf);
    ::close(df);
    if (r != 0) return where = name, r;
  } else if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    ssize_t n = ::readlinkat(from, name, target.data(), target.size());
    if (n < 0) return where = name, errno;
    target.resize(static_cast<size_t>(n));
    if (::symlinkat(target.c_str(), to, name) != 0) return where = name, errno;
  } else {
    // A node (a socket or fifo left in the image, rarely a device): made where the kernel lets
    // this process, else left out as runc's copy would fail to make it too.
    if (::mknodat(to, name, st.st_mode, st.st_rdev) != 0) return 0;
  }
  // Owner, then mode (a chown clears set-id bits), then times; an owner this namespace cannot
  // give is left as it is.
  (void)::fchownat(to, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
  if (!S_ISLNK(st.st_mode) && ::fchmodat(to, name, st.st_mode & 07777, 0) != 0) return where = name, errno;
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  (void)::utimensat(to, name, times, AT_SYMLINK_NOFOLLOW);
  return 0;
}

int copy_dir(int from, int to, std::string& where) {
  int dup = ::openat(from, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dup < 0) return errno;
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    int e = errno;
    ::close(dup);
    return e;
  }
  int r = 0;
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    r = copy_entry(from, to, e->d_name, where);
    if (r != 0) break;
  }
  ::closedir(d);
  return r;
}

}  // namespace

int copy_tree(int from, int to, bool top, std::string* where) {
  int r = copy_dir(from, to, *where);
  if (r != 0 || !top) return r;
  struct stat st;
  if (::fstat(from, &st) != 0) return errno;
  (void)::fchown(to, st.st_uid, st.st_gid);
  return ::fchmod(to, st.st_mode & 07777) == 0 ? 0 : errno;
}

}  // namespace kern::sys
