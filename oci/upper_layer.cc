// Reading a box's upper directory; see upper_layer.h.
#include "oci/upper_layer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <map>
#include <utility>

#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"

namespace kern::oci {
namespace {

enum class ItemKind { dir, file, symlink, hardlink, whiteout, opaque, special };

struct Item {
  ItemKind kind;
  char change;  // A, C, D; 0 for an opaque marker
  std::string path;
  struct stat st {};
  std::string link;  // symlink target, or the hardlink's first path
};

bool is_whiteout(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0); }

bool opaque_dir(int fd) {
  char v[4];
  for (const char* name : {"user.overlay.opaque", "trusted.overlay.opaque"}) {
    ssize_t n = ::fgetxattr(fd, name, v, sizeof v);
    if (n == 1 && v[0] == 'y') return true;
  }
  return false;
}


class Walker {
 public:
  explicit Walker(const UpperSource& s) : src_(s) {}

  // `left_out` counts the entries left out as stubs or unchanged copies: a directory the image
  // lacks that held only those was made for them, and goes too.
  Status walk(int dirfd, int lower_dirfd, const std::string& rel, std::vector<Item>& out, size_t& left_out) {
    KERN_TRY_ASSIGN(std::vector<std::string> names, sys::sorted_names(dirfd, "."));
    for (const auto& name : names) {
      std::string path = rel.empty() ? name : rel + "/" + name;
      struct stat st;
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return fail_errno("lstat \"upper/" + path + "\"");
      struct stat lst;
      bool in_lower = lower_dirfd >= 0 && ::fstatat(lower_dirfd, name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0;
      bool stub = std::find(src_.stubs.begin(), src_.stubs.end(), path) != src_.stubs.end();
      if (is_whiteout(st)) {
        if (in_lower) out.push_back({ItemKind::whiteout, 'D', path, st, {}});
        continue;
      }
      char change = in_lower ? 'C' : 'A';
      if (S_ISDIR(st.st_mode)) {
        KERN_TRY_ASSIGN(UniqueFd sub, sys::open_at(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        bool opaque = opaque_dir(sub.get());
        UniqueFd lower_sub;
        if (in_lower && S_ISDIR(lst.st_mode) && !opaque) {
          int l = ::openat(lower_dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (l >= 0) lower_sub = UniqueFd(l);
        }
        std::vector<Item> children;
        size_t inner_left_out = 0;
        KERN_TRY(walk(sub.get(), lower_sub.valid() ? lower_sub.get() : -1, path, children, inner_left_out));
        bool unchanged_copy = in_lower && S_ISDIR(lst.st_mode) && !opaque && children.empty() &&
                              (lst.st_mode & 07777) == (st.st_mode & 07777);
        bool made_for_stubs = !in_lower && children.empty() && inner_left_out > 0;
        if (unchanged_copy || made_for_stubs || (stub && !in_lower && children.empty())) {
          ++left_out;
          continue;
        }
        out.push_back({ItemKind::dir, change, path, st, {}});
        if (opaque && in_lower) out.push_back({ItemKind::opaque, 0, path, st, {}});
        for (auto& c : children) out.push_back(std::move(c));
        continue;
      }
      if (stub && !in_lower && S_ISREG(st.st_mode) && st.st_size == 0) {
        ++left_out;
        continue;
      }
      if (S_ISREG(st.st_mode)) {
        if (st.st_nlink > 1) {
          auto key = std::make_pair(st.st_dev, st.st_ino);
          auto it = links_.find(key);
          if (it != links_.end()) {
            out.push_back({ItemKind::hardlink, change, path, st, it->second});
            continue;
          }
          links_.emplace(key, path);
        }
        out.push_back({ItemKind::file, change, path, st, {}});
      } else if (S_ISLNK(st.st_mode)) {
        std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
        if (n < 0) return fail_errno("readlink \"upper/" + path + "\"");
        target.resize(static_cast<size_t>(n));
        out.push_back({ItemKind::symlink, change, path, st, target});
      } else {
        out.push_back({ItemKind::special, change, path, st, {}});
      }
    }
    return {};
  }

 private:
  const UpperSource& src_;
  std::map<std::pair<dev_t, ino_t>, std::string> links_;
};

Result<std::vector<Item>> collect(const UpperSource& src) {
  std::vector<Item> items;
  Walker w(src);
  size_t left_out = 0;
  KERN_TRY(w.walk(src.upper_fd, src.lower_fd, "", items, left_out));
  return items;
}

LayerEntryMeta meta_of(const UpperSource& src, const Item& it) {
  LayerEntryMeta m;
  m.path = it.path;
  m.perm = it.st.st_mode & 07777;
  m.uid = it.st.st_uid == src.host_uid ? 0 : it.st.st_uid;
  m.gid = it.st.st_gid == src.host_gid ? 0 : it.st.st_gid;
  m.mtime = it.st.st_mtim.tv_sec;
  // A file of the image the box changed, which it saw as its user's own: its owner in the image.
  if (it.change == 'C' && src.lower_owners && it.st.st_uid == src.host_uid) {
    auto o = src.lower_owners->find(it.path);
    if (o != src.lower_owners->end()) {
      m.uid = o->second.uid;
      m.gid = o->second.gid;
      // The setuid and setgid bits the tree cleared, back where the mode is otherwise unchanged.
      if ((o->second.mode & 0777) == (m.perm & 0777)) m.perm = o->second.mode & 07777;
    }
  }
  return m;
}

// A file the box made unreadable to its owner (chmod 000) is still the user's: readable after
// a chmod, put back at once.
Result<UniqueFd> open_upper_file(int upper_fd, const std::string& path, const struct stat& st) {
  auto fd = sys::open_at(upper_fd, path, O_RDONLY | O_NOFOLLOW);
  if (fd || fd.error().sys_errno() != EACCES) return fd;
  if (::fchmodat(upper_fd, path.c_str(), (st.st_mode & 07777) | S_IRUSR, 0) != 0) return fd;
  auto again = sys::open_at(upper_fd, path, O_RDONLY | O_NOFOLLOW);
  (void)::fchmodat(upper_fd, path.c_str(), st.st_mode & 07777, 0);
  return again;
}

}  // namespace

Result<LowerOwners> read_lower_owners(const std::string& owners_path) {
  LowerOwners out;
  auto text = sys::read_file(AT_FDCWD, owners_path, size_t{256} << 20);
  if (!text) {
    if (text.error().sys_errno() == ENOENT) return out;
    return fail(std::move(text).error());
  }
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    auto j = nlohmann::json::parse(text->substr(pos, end - pos), nullptr, false);
    pos = end + 1;
    if (!j.is_object() || !j.contains("path") || !j["path"].is_string()) continue;
    std::string path = j["path"].get<std::string>();
    if (path.rfind('/', 0) == 0) path.erase(0, 1);
    LowerOwner o;
    o.uid = static_cast<uint32_t>(j.value("uid", int64_t{0}));
    o.gid = static_cast<uint32_t>(j.value("gid", int64_t{0}));
    o.mode = static_cast<mode_t>(std::strtoul(j.value("mode", std::string("0")).c_str(), nullptr, 8) & 07777);
    out[path] = o;
  }
  return out;
}

const std::vector<std::string>& box_mount_stubs() {
  static const std::vector<std::string> stubs{"proc", "dev", "sys", "etc/hosts", "etc/hostname", "etc/resolv.conf",
                                              "run/secrets", "dev/shm", "tmp"};
  return stubs;
}

Result<std::vector<UpperChange>> upper_changes(const UpperSource& src) {
  KERN_TRY_ASSIGN(std::vector<Item> items, collect(src));
  std::vector<UpperChange> out;
  for (const auto& it : items)
    if (it.change) out.push_back({it.change, "/" + it.path});
  return out;
}

Result<UpperLayerStats> write_upper_layer(const UpperSource& src, LayerTar& tar) {
  KERN_TRY_ASSIGN(std::vector<Item> items, collect(src));
  UpperLayerStats stats;
  for (const auto& it : items) {
    LayerEntryMeta m = meta_of(src, it);
    switch (it.kind) {
      case ItemKind::dir:
        KERN_TRY(tar.dir(m));
        break;
      case ItemKind::opaque:
        KERN_TRY(tar.opaque(it.path));
        break;
      case ItemKind::whiteout:
        KERN_TRY(tar.whiteout(it.path));
        break;
      case ItemKind::symlink:
        KERN_TRY(tar.symlink(m, it.link));
        break;
      case ItemKind::hardlink:
        KERN_TRY(tar.hardlink(m, it.link));
        break;
      case ItemKind::file: {
        KERN_TRY_ASSIGN(UniqueFd fd, open_upper_file(src.upper_fd, it.path, it.st));
        KERN_TRY(tar.file(m, fd.get(), static_cast<uint64_t>(it.st.st_size), "upper/" + it.path));
        break;
      }
      case ItemKind::special:
        ++stats.skipped_special;
        continue;
    }
    ++stats.entries;
  }
  return stats;
}

}  // namespace kern::oci
