// The local image store; see store.h for the layout and the locking rules.
#include "oci/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <set>

#include "oci/digest.h"
#include "oci/reference.h"
#include "oci/store_detail.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kRecordLimit = 4 << 20;

std::string q(const std::string& s) { return "\"" + s + "\""; }

Unexpected<Error> store_error(const std::string& what, int err = errno) {
  return fail(ErrorKind::image, err, what);
}

// mkdir -p of the user's own path: symlinks in it (a ~/.cache pointing elsewhere) are the
// user's choice and are followed.
Status make_dirs(const std::string& path, mode_t mode) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) return store_error("mkdir " + q(prefix));
  }
  return {};
}

std::string random_suffix() {
  unsigned char b[8];
  if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    uint64_t t = static_cast<uint64_t>(::getpid()) * 2654435761u ^ static_cast<uint64_t>(::time(nullptr));
    std::memcpy(b, &t, sizeof b);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// The names in a directory of records; unlike list_dir, a directory that cannot be read is an
// error (an empty answer would make every tree and blob look unused).
Result<std::vector<std::string>> list_record_dir(int dirfd, const std::string& sub) {
  std::vector<std::string> out;
  int fd = ::openat(dirfd, sub.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return out;
    return store_error("open store directory " + q(sub));
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    int err = errno;
    ::close(fd);
    return store_error("opendir " + q(sub), err);
  }
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
    errno = 0;
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return store_error("readdir " + q(sub), err);
  return out;
}

}  // namespace

std::vector<std::string> store_detail::list_dir(int dirfd, const std::string& sub) {
  std::vector<std::string> out;
  int fd = ::openat(dirfd, sub.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return out;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return out;
  }
  while (struct dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

bool store_detail::ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

using store_detail::ends_with;
using store_detail::list_dir;

Staging::~Staging() {
  if (!name_.empty() && fd_.valid() && parent_.valid()) (void)sys::remove_tree(parent_.get(), name_);
}

Staging& Staging::operator=(Staging&& o) noexcept {
  if (this != &o) {
    if (!name_.empty() && fd_.valid() && parent_.valid()) (void)sys::remove_tree(parent_.get(), name_);
    path_ = std::move(o.path_);
    name_ = std::move(o.name_);
    parent_ = std::move(o.parent_);
    fd_ = std::move(o.fd_);
    o.name_.clear();
  }
  return *this;
}

Result<UniqueFd> Staging::create(const std::string& name, int flags) const {
  int fd;
  do fd = ::openat(fd_.get(), name.c_str(), flags | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return store_error("create " + q(file(name)));
  return UniqueFd(fd);
}

Status Staging::write(const std::string& name, std::string_view data) const {
  KERN_TRY_ASSIGN(UniqueFd out, create(name, O_WRONLY));
  Status st = sys::write_all(out.get(), data, q(file(name)));
  if (!st) return fail(ErrorKind::image, st.error().sys_errno(), "write " + q(file(name)));
  return {};
}

Result<Store> Store::open(bool create, const std::string& root) {
  Store s;
  s.root_ = root.empty() ? paths::cache_dir() : root;
  if (create) {
    KERN_TRY(make_dirs(s.root_, 0700));
    for (const char* sub : {"blobs", "blobs/sha256", "trees", "images", "refs", "staging"}) {
      std::string p = s.root_ + "/" + sub;
      if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) return store_error("mkdir " + q(p));
    }
  }
  int fd = ::open(s.root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && (create || errno != ENOENT)) return store_error("open " + q(s.root_));
  s.fd_ = UniqueFd(fd);
  return s;
}

std::string Store::blob_path(const std::string& digest) const {
  return root_ + "/blobs/sha256/" + std::string(digest_hex(digest));
}
std::string Store::tree_path(const std::string& tree) const { return root_ + "/trees/" + tree; }
std::string Store::owners_path(const std::string& tree) const { return root_ + "/trees/" + tree + ".owners.jsonl"; }
std::string Store::recipes_path(const std::string& tree) const { return root_ + "/trees/" + tree + ".recipes"; }

namespace {
// A record read fails with EBADMSG when its content is what is wrong (not JSON, not a record,
// over the size limit): such a file stays bad whatever is retried, so the verbs name it and go
// on, and gc removes it. Any other errno (EACCES, EIO) may pass and keeps gc from guessing.
constexpr int kCorruptRecord = EBADMSG;

Result<std::optional<ImageRecord>> read_record(int fd, const std::string& root, const std::string& rel) {
  if (fd < 0) return std::optional<ImageRecord>();
  auto text = sys::read_file(fd, rel, kRecordLimit);
  std::string path = root + "/" + rel;
  if (!text) {
    int err = text.error().sys_errno();
    if (err == ENOENT) return std::optional<ImageRecord>();
    if (err == EFBIG)
      return fail(ErrorKind::image, kCorruptRecord,
                  "store record " + q(path) + " is larger than the " + std::to_string(kRecordLimit >> 20) +
                      " MiB a record may be");
    return fail(ErrorKind::image, err, "reading store record " + q(path));
  }
  auto r = record_from_json(*text);
  if (!r) return fail(Error(ErrorKind::image, kCorruptRecord, r.error().message()).with_context(path));
  return std::optional<ImageRecord>(std::move(*r));
}

}  // namespace

Status Store::check_record_size(const ImageRecord& r) const {
  size_t n = record_to_json(r).size();
  if (n <= kRecordLimit) return {};
  return fail(Error(ErrorKind::image, EFBIG,
                    "the image's store record would be " + std::to_string(n) + " bytes, over the limit of " +
                        std::to_string(kRecordLimit) + " bytes (" + std::to_string(kRecordLimit >> 20) +
                        " MiB) that kern reads a record back with")
                  .with_hint("the record holds the image config's Env, Cmd, Entrypoint, WorkingDir and User: "
                             "shorten them and build the image again"));
}

Status Store::write_record(const std::string& dir, const std::string& name, const ImageRecord& r) const {
  // Never written larger than it can be read back.
  KERN_TRY(check_record_size(r));
  std::string text = record_to_json(r);
  std::string tmp = dir + "/.tmp-" + random_suffix();
  Status st = sys::write_file(fd_.get(), tmp, text, 0600);
  if (!st) {
    int err = st.error().sys_errno();
    ::unlinkat(fd_.get(), tmp.c_str(), 0);
    return store_error("write " + q(root_ + "/" + tmp), err);
  }
  if (::renameat(fd_.get(), tmp.c_str(), fd_.get(), (dir + "/" + name).c_str()) != 0) {
    int err = errno;
    ::unlinkat(fd_.get(), tmp.c_str(), 0);
    return store_error("rename into " + q(root_ + "/" + dir + "/" + name), err);
  }
  return {};
}

bool record_corrupt(const Error& e) { return e.sys_errno() == kCorruptRecord; }

Result<std::optional<ImageRecord>> Store::find_ref(const std::string& ref) const {
  KERN_TRY_ASSIGN(auto r, read_record(fd_.get(), root_, "refs/" + escape_ref(ref) + ".json"));
  if (r && r->ref != ref) return std::optional<ImageRecord>();  // a shortened name that collided
  return r;
}

Result<std::optional<ImageRecord>> Store::find_image(const std::string& digest) const {
  if (!valid_digest(digest)) return std::optional<ImageRecord>();
  return read_record(fd_.get(), root_, "images/" + std::string(digest_hex(digest)) + ".json");
}

namespace {
Result<Store::Listing> list_records(int fd, const std::string& root, const std::string& dir) {
  Store::Listing out;
  if (fd < 0) return out;
  KERN_TRY_ASSIGN(std::vector<std::string> names, list_record_dir(fd, dir));
  for (const auto& name : names) {
    if (!ends_with(name, ".json") || name[0] == '.') continue;
    auto r = read_record(fd, root, dir + "/" + name);
    if (!r && record_corrupt(r.error())) out.corrupt.push_back(dir + "/" + name);
    if (!r) out.unreadable.push_back(std::move(r).error());
    else if (*r) out.records.push_back(std::move(**r));  // gone since the listing: not a record
  }
  return out;
}
}  // namespace

Result<Store::Listing> Store::list_refs() const { return list_records(fd_.get(), root_, "refs"); }

Result<Store::Listing> Store::list_images() const { return list_records(fd_.get(), root_, "images"); }

Status Store::write_image(const ImageRecord& r) const {
  ImageRecord copy = r;
  copy.ref.clear();
  copy.source_stamp.clear();
  return write_record("images", std::string(digest_hex(r.digest)) + ".json", copy);
}

Status Store::write_ref(const ImageRecord& r) const { return write_record("refs", escape_ref(r.ref) + ".json", r); }

Status Store::remove_ref(const std::string& ref) const {
  std::string rel = "refs/" + escape_ref(ref) + ".json";
  if (::unlinkat(fd_.get(), rel.c_str(), 0) != 0 && errno != ENOENT) return store_error("unlink " + q(rel));
  return {};
}

Status Store::remove_image(const std::string& digest) const {
  std::string rel = "images/" + std::string(digest_hex(digest)) + ".json";
  if (::unlinkat(fd_.get(), rel.c_str(), 0) != 0 && errno != ENOENT) return store_error("unlink " + q(rel));
  return {};
}

Result<std::vector<std::string>> Store::list_trees() const {
  std::vector<std::string> out;
  if (!fd_.valid()) return out;
  KERN_TRY_ASSIGN(std::vector<std::string> names, list_record_dir(fd_.get(), "trees"));
  for (auto& n : names)
    if (n.find('.') == std::string::npos) out.push_back(std::move(n));
  return out;
}

Result<std::vector<std::string>> Store::list_blobs() const {
  std::vector<std::string> out;
  if (!fd_.valid()) return out;
  KERN_TRY_ASSIGN(std::vector<std::string> names, list_record_dir(fd_.get(), "blobs/sha256"));
  for (auto& n : names)
    if (valid_digest("sha256:" + n)) out.push_back("sha256:" + n);
  return out;
}

bool Store::has_blob(const std::string& digest) const {
  struct stat st;
  return fd_.valid() && valid_digest(digest) &&
         ::fstatat(fd_.get(), ("blobs/sha256/" + std::string(digest_hex(digest))).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(st.st_mode);
}

bool Store::has_tree(const std::string& tree) const {
  struct stat st;
  return fd_.valid() && ::fstatat(fd_.get(), ("trees/" + tree).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR(st.st_mode);
}

Result<std::string> Store::read_blob(const std::string& digest, size_t limit) const {
  if (!valid_digest(digest)) return fail(ErrorKind::image, EINVAL, "invalid digest " + q(digest));
  auto r = sys::read_file(fd_.get(), "blobs/sha256/" + std::string(digest_hex(digest)), limit);
  if (!r) return fail(ErrorKind::image, r.error().sys_errno(), "reading blob " + digest);
  return r;
}

Status Store::commit_blob(int dirfd, const std::string& name, const std::string& digest) const {
  std::string dst = "blobs/sha256/" + std::string(digest_hex(digest));
  if (::renameat(dirfd, name.c_str(), fd_.get(), dst.c_str()) != 0)
    return store_error("rename into " + q(root_ + "/" + dst));
  return {};
}

Status Store::put_blob(const Staging& s, const std::string& digest, std::string_view data) const {
  if (has_blob(digest)) return {};
  std::string name = "blob-" + std::string(digest_hex(digest));
  KERN_TRY(s.write(name, data));
  return commit_blob(s.fd(), name, digest);
}

Status Store::remove_blob(const std::string& digest) const {
  if (!valid_digest(digest)) return fail(ErrorKind::image, EINVAL, "invalid digest " + q(digest));
  std::string rel = "blobs/sha256/" + std::string(digest_hex(digest));
  if (::unlinkat(fd_.get(), rel.c_str(), 0) != 0 && errno != ENOENT)
    return store_error("unlink " + q(root_ + "/" + rel));
  return {};
}

Status Store::commit_tree(const Staging& s, const std::string& name, const std::string& owners_name,
                          const std::string& tree, const std::string& recipes_name, bool replace) const {
  for (const auto& [from, suffix] : {std::pair{owners_name, ".owners.jsonl"}, std::pair{recipes_name, ".recipes"}}) {
    if (from.empty()) continue;
    std::string dst = "trees/" + tree + suffix;
    if (::renameat(s.fd(), from.c_str(), fd_.get(), dst.c_str()) != 0 && errno != ENOENT)
      return store_error("rename into " + q(root_ + "/" + dst));
  }
  std::string dst = "trees/" + tree;
  if (replace) {
    auto x = sys::exchange_at(s.fd(), name, fd_.get(), dst);
    // Any other failure is the load's: the rename below would meet the damaged tree and read
    // ENOTEMPTY as another import's, keeping it.
    if (!x) return store_error("renameat2 RENAME_EXCHANGE " + q(root_ + "/" + dst), x.error().sys_errno());
    if (*x == sys::Exchange::swapped) return {};
    // A file system without the flag: the damaged tree is moved into the staging dir first, then
    // ours into its place. Between the two renames the tree is missing, and a box starting then
    // is told so; it is never the damaged one.
    if (*x == sys::Exchange::unsupported) return replace_tree_by_renames(s, name, dst);
  }
  if (::renameat(s.fd(), name.c_str(), fd_.get(), dst.c_str()) != 0) {
    if (errno == EEXIST || errno == ENOTEMPTY) return {};  // another import finished first
    return store_error("rename into " + q(root_ + "/" + dst));
  }
  return {};
}

Status Store::replace_tree_by_renames(const Staging& s, const std::string& name, const std::string& dst) const {
  const char* aside = "replaced-tree";
  if (::renameat(fd_.get(), dst.c_str(), s.fd(), aside) != 0 && errno != ENOENT)
    return store_error("rename " + q(root_ + "/" + dst) + " into " + q(s.file(aside)));
  if (::renameat(s.fd(), name.c_str(), fd_.get(), dst.c_str()) != 0) {
    // Another repair put its tree there between the two renames: that one is as good as ours.
    if (errno == EEXIST || errno == ENOTEMPTY) return {};
    Status err = store_error("rename into " + q(root_ + "/" + dst));
    (void)::renameat(s.fd(), aside, fd_.get(), dst.c_str());  // the old tree back, damaged or not
    return err;
  }
  return {};
}

Result<UniqueFd> Store::lock_store(bool exclusive) const {
  int fd = ::openat(fd_.get(), "store.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return store_error("open " + q(root_ + "/store.lock"));
  UniqueFd lock(fd);
  while (::flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0)
    if (errno != EINTR) return store_error("flock " + q(root_ + "/store.lock"));
  return lock;
}

Result<UniqueFd> Store::lock_tree_shared(const std::string& tree) const {
  std::string rel = "trees/" + tree + ".lock";
  for (int attempt = 0; attempt < 8; ++attempt) {
    int fd = ::openat(fd_.get(), rel.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return store_error("open " + q(root_ + "/" + rel));
    UniqueFd lock(fd);
    while (::flock(fd, LOCK_SH) != 0)
      if (errno != EINTR) return store_error("flock " + q(root_ + "/" + rel));
    // A deleter unlinks the lock file after removing the tree: if ours is no longer the file at
    // that path, the tree we wanted is gone; look again.
    struct stat held, now;
    if (::fstat(fd, &held) != 0) return store_error("fstat " + q(rel));
    if (::fstatat(fd_.get(), rel.c_str(), &now, 0) != 0 || held.st_ino != now.st_ino || held.st_dev != now.st_dev)
      continue;
    if (!has_tree(tree)) return fail(ErrorKind::image, ENOENT, "tree " + tree + " is not in the store");
    return lock;
  }
  return fail(ErrorKind::image, EAGAIN, "tree " + tree + " keeps changing under us");
}

Result<UniqueFd> Store::try_lock_tree_exclusive(const std::string& tree) const {
  std::string rel = "trees/" + tree + ".lock";
  int fd = ::openat(fd_.get(), rel.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == ENOSPC || errno == EDQUOT)) {
    // No inode for a lock file on a full disk: a lock file that does not exist is held by no
    // box (a box creates it to lock it, which it cannot do either), and one that exists opens.
    fd = ::openat(fd_.get(), rel.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
      fd = ::openat(fd_.get(), ("trees/" + tree).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return store_error("open " + q(root_ + "/" + rel));
  UniqueFd lock(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return UniqueFd();
    return store_error("flock " + q(rel));
  }
  return lock;
}

Status Store::remove_tree(const std::string& tree) const {
  // Move it into staging first: a crash halfway through deleting leaves a staging leftover that
  // the next run removes, never a half-deleted tree under its real name.
  std::string rel = "trees/" + tree;
  auto s = begin_staging();
  if (!s) {
    int err = s.error().sys_errno();
    if (err != ENOSPC && err != EDQUOT) return fail(std::move(s).error());
    // No inode or block left for a staging dir (a full disk is when gc is needed most): the
    // tree is renamed aside within trees/ (no new inode) and removed there; a crash midway
    // leaves trees/.rm-<id>, which collect() removes.
    std::string aside = "trees/.rm-" + tree;
    if (::renameat(fd_.get(), rel.c_str(), fd_.get(), aside.c_str()) != 0 && errno != ENOENT)
      return store_error("rename " + q(root_ + "/" + rel) + " for removal");
    (void)sys::remove_tree(fd_.get(), aside);
  } else if (::renameat(fd_.get(), rel.c_str(), s->fd(), "tree") != 0 && errno != ENOENT) {
    return store_error("rename " + q(root_ + "/" + rel) + " for removal");
  }
  ::unlinkat(fd_.get(), (rel + ".owners.jsonl").c_str(), 0);
  ::unlinkat(fd_.get(), (rel + ".recipes").c_str(), 0);
  ::unlinkat(fd_.get(), (rel + ".lock").c_str(), 0);
  return {};  // ~Staging removes the tree
}

UniqueFd Store::lock_build(const std::string& tree) const {
  std::string rel = "staging/build-" + tree;
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (::mkdirat(fd_.get(), rel.c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
    UniqueFd fd(::openat(fd_.get(), rel.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) continue;  // removed by a cleaner between mkdir and open
    while (::flock(fd.get(), LOCK_EX) != 0)
      if (errno != EINTR) return UniqueFd();
    // A cleaner may have removed the directory while we waited: lock the one that is there.
    struct stat held, now;
    if (::fstat(fd.get(), &held) == 0 && ::fstatat(fd_.get(), rel.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        held.st_ino == now.st_ino && held.st_dev == now.st_dev)
      return fd;
  }
  return UniqueFd();
}

void Store::end_build(const std::string& tree) const {
  // A waiter then holds a lock on a removed directory: lock_build sees that and starts over.
  ::unlinkat(fd_.get(), ("staging/build-" + tree).c_str(), AT_REMOVEDIR);
}

void Store::wait_build(const std::string& tree) const {
  UniqueFd fd(::openat(fd_.get(), ("staging/build-" + tree).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return;
  while (::flock(fd.get(), LOCK_SH) != 0 && errno == EINTR) {
  }
}

Result<Staging> Store::begin_staging() const {
  Staging s;
  int parent = ::openat(fd_.get(), "staging", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return store_error("open " + q(root_ + "/staging"));
  s.parent_ = UniqueFd(parent);
  // The directory is made and locked under a "new-" name that clean_stale_staging() leaves
  // alone, then renamed: a concurrent cleaner can never see an "s-" directory that is not yet
  // locked by its owner and remove it under that owner's feet.
  std::string suffix = std::to_string(::getpid()) + "-" + random_suffix();
  std::string fresh = "new-" + suffix, name = "s-" + suffix;
  if (::mkdirat(parent, fresh.c_str(), 0700) != 0) return store_error("mkdir staging " + q(fresh));
  int fd = ::openat(parent, fresh.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return store_error("open staging " + q(fresh));
  s.fd_ = UniqueFd(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return store_error("flock staging " + q(fresh));
  if (::renameat(parent, fresh.c_str(), parent, name.c_str()) != 0) return store_error("rename staging " + q(fresh));
  s.name_ = name;
  s.path_ = root_ + "/staging/" + name;
  return s;
}

size_t Store::clean_stale_staging() const {
  size_t n = 0;
  int parent = ::openat(fd_.get(), "staging", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return 0;
  UniqueFd p(parent);
  for (const auto& name : list_dir(parent, ".")) {
    if (name.rfind("new-", 0) == 0) {
      // Only a crash between mkdir and rename leaves one of these; give a live owner time.
      struct stat st;
      if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || ::time(nullptr) - st.st_mtime < 60)
        continue;
    }
    int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOTDIR || errno == ELOOP) ::unlinkat(parent, name.c_str(), 0);
      continue;
    }
    UniqueFd d(fd);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) continue;  // its owner is alive
    if (sys::remove_tree(parent, name)) ++n;
  }
  return n;
}

}  // namespace kern::oci
