// The named volume store; see volume_store.h.
#include "runtime/volume_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"

namespace kern {
namespace {

constexpr size_t kMaxName = 128;
constexpr const char* kRecord = "volume.json";

bool name_char(char c, bool first) {
  bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  return alnum || (!first && (c == '_' || c == '.' || c == '-'));
}

Error no_volume(const std::string& name) {
  return Error(ErrorKind::config, 0, "no volume named " + log::quoted(name)).with_hint("kern volume ls lists the volumes");
}

Status make_dir(const std::string& path, mode_t mode) {
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return fail_errno("mkdir " + log::quoted(path));
  return {};
}

// The record's text as written, or "" when it cannot be read.
std::string read_small(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return "";
  auto text = sys::read_all(fd.get(), 1 << 16, path);
  return text ? *text : "";
}

uint64_t tree_bytes_at(int dirfd, int depth) {
  if (depth > 256) return 0;
  UniqueFd own(::dup(dirfd));
  DIR* d = own.valid() ? ::fdopendir(own.get()) : nullptr;
  if (d == nullptr) return 0;
  own.release();
  uint64_t total = 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(::dirfd(d), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.valid()) total += tree_bytes_at(sub.get(), depth + 1);
    } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_size);
    }
  }
  ::closedir(d);
  return total;
}

}  // namespace

bool valid_volume_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxName) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (!name_char(name[i], i == 0)) return false;
  return true;
}

Status check_volume_name(const std::string& name, const std::string& what) {
  if (valid_volume_name(name)) return {};
  return fail(Error(ErrorKind::usage, 0, what + ": invalid volume name " + log::quoted(name))
                  .with_hint("a volume name is a letter or digit, then letters, digits, '_', '.' or '-' "
                             "(at most 128)"));
}

std::string random_volume_name() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  // Without getrandom (never on kern's kernels) the time and pid still make a name unlikely to clash.
  for (size_t i = got; i < sizeof bytes; ++i)
    bytes[i] = static_cast<unsigned char>((::time(nullptr) >> (i % 8)) ^ (::getpid() >> (i % 16)) ^ (i * 37));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += hex[b >> 4], out += hex[b & 15];
  return out;
}

uint64_t tree_bytes(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  return fd.valid() ? tree_bytes_at(fd.get(), 0) : 0;
}

std::string VolumeStore::default_root() { return paths::cache_dir() + "/volumes"; }

Result<VolumeInfo> VolumeStore::create(const std::string& name,
                                       const std::vector<std::pair<std::string, std::string>>& labels,
                                       bool* created) const {
  if (created) *created = false;
  KERN_TRY(check_volume_name(name, "volume"));
  if (auto have = get(name)) return have;
  std::string parent = root_.substr(0, root_.find_last_of('/'));
  if (!parent.empty()) KERN_TRY(make_dir(parent, 0700));
  KERN_TRY(make_dir(root_, 0700));
  // Made under a temporary name and renamed into place: a listing never sees half a volume, and
  // of two kern making the same name at once one wins and the other answers with its volume.
  std::string tmp = root_ + "/.new-" + name + "-" + std::to_string(::getpid());
  (void)sys::remove_tree(AT_FDCWD, tmp);
  KERN_TRY(make_dir(tmp, 0700));
  auto undo = [&] { (void)sys::remove_tree(AT_FDCWD, tmp); };
  if (::mkdir((tmp + "/_data").c_str(), 0755) != 0) {
    undo();
    return fail_errno("mkdir " + log::quoted(tmp + "/_data"));
  }
  VolumeInfo v;
  v.name = name;
  v.mountpoint = data_path(name);
  v.created_unix = ::time(nullptr);
  v.labels = labels;
  nlohmann::json j = {{"name", name}, {"created_unix", v.created_unix}, {"labels", labels}};
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  UniqueFd fd(::open((tmp + "/" + kRecord).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid() || !sys::write_all(fd.get(), text, kRecord)) {
    undo();
    return fail_errno("write the record of volume " + log::quoted(name));
  }
  fd.reset();
  if (::rename(tmp.c_str(), (root_ + "/" + name).c_str()) != 0) {
    int err = errno;
    undo();
    if (err == EEXIST || err == ENOTEMPTY) return get(name);
    return fail(ErrorKind::setup, err, "create volume " + log::quoted(name));
  }
  if (created) *created = true;
  return v;
}

Result<VolumeInfo> VolumeStore::get(const std::string& name) const {
  if (!valid_volume_name(name)) return fail(no_volume(name));
  std::string dir = root_ + "/" + name;
  struct stat st;
  if (::lstat((dir + "/_data").c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return fail(no_volume(name));
  VolumeInfo v;
  v.name = name;
  v.mountpoint = dir + "/_data";
  v.created_unix = st.st_mtime;
  auto j = nlohmann::json::parse(read_small(dir + "/" + kRecord), nullptr, false);
  if (j.is_object()) {
    v.created_unix = j.value("created_unix", v.created_unix);
    if (auto l = j.find("labels"); l != j.end() && l->is_array())
      for (const auto& kv : *l)
        if (kv.is_array() && kv.size() == 2 && kv[0].is_string() && kv[1].is_string())
          v.labels.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
  }
  return v;
}

std::vector<VolumeInfo> VolumeStore::list() const {
  std::vector<VolumeInfo> out;
  DIR* d = ::opendir(root_.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (!valid_volume_name(n)) continue;  // ".", "..", a ".new-" being made
    if (auto v = get(n)) out.push_back(std::move(*v));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const VolumeInfo& a, const VolumeInfo& b) { return a.name < b.name; });
  return out;
}

bool VolumeStore::is_empty(const std::string& name) const {
  DIR* d = ::opendir(data_path(name).c_str());
  if (d == nullptr) return false;
  bool empty = true;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(d);
  return empty;
}

Result<UniqueFd> VolumeStore::hold(const std::string& name) const {
  KERN_TRY(get(name));
  std::string rec = root_ + "/" + name + "/" + kRecord;
  UniqueFd fd(::open(rec.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return fail(no_volume(name));
  while (::flock(fd.get(), LOCK_SH) != 0)
    if (errno != EINTR) return fail_errno("lock volume " + log::quoted(name));
  // Removed meanwhile (its directory renamed aside before the lock was ours): no longer it.
  struct stat held, now;
  if (::fstat(fd.get(), &held) != 0 || ::stat(rec.c_str(), &now) != 0 || held.st_ino != now.st_ino ||
      held.st_dev != now.st_dev)
    return fail(no_volume(name));
  return fd;
}

Status VolumeStore::remove(const std::string& name) const {
  KERN_TRY(get(name));
  // A box that is starting holds it (hold()) until its record names the volume.
  UniqueFd rec(::open((root_ + "/" + name + "/" + kRecord).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (rec.valid() && ::flock(rec.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    return fail(Error(ErrorKind::config, 0, "volume " + log::quoted(name) + " is in use by a box that is starting")
                    .with_hint("kern ps -a names it in a moment"));
  // Renamed aside first, so that a volume half removed (a file the caller cannot delete) is no
  // longer listed under its name nor mounted by the next box.
  std::string dir = root_ + "/" + name;
  std::string gone = root_ + "/.gone-" + name + "-" + std::to_string(::getpid());
  if (::rename(dir.c_str(), gone.c_str()) != 0) return fail_errno("remove volume " + log::quoted(name));
  // No longer reachable by its name (hold() checks the record's path after its lock), so the
  // lock goes before the files: a FUSE file system (sshfs, gocryptfs, bindfs) keeps a file
  // unlinked while open as a .fuse_hidden file, and the directory would not be empty.
  rec.reset();
  if (auto st = sys::remove_tree(AT_FDCWD, gone); !st)
    return fail(Error(st.error()).with_hint("what is left is in " + log::quoted(gone)));
  return {};
}

}  // namespace kern
