// What the store frees and counts: gc, the rollback of a failed import, disk use; see store.h.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include "oci/digest.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "oci/store_detail.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {

using store_detail::ends_with;
using store_detail::list_dir;

void Store::drop_unreferenced(const std::string& tree, const std::vector<std::string>& blobs) const {
  auto refs = list_refs();
  auto images = list_images();
  // Whatever a record that cannot be read keeps is unknown: then nothing is removed.
  if (!refs || !images || !refs->unreadable.empty() || !images->unreadable.empty()) return;
  std::set<std::string> live_trees, live_blobs;
  for (const Listing* l : {&*refs, &*images})
    for (const auto& r : l->records) {
      live_trees.insert(r.tree);
      live_blobs.insert(r.digest);
      live_blobs.insert(r.config_digest);
      live_blobs.insert(r.layers.begin(), r.layers.end());
    }
  if (!tree.empty() && has_tree(tree) && !live_trees.count(tree)) {
    auto lk = try_lock_tree_exclusive(tree);
    if (lk && lk->valid()) (void)remove_tree(tree);
  }
  for (const auto& b : blobs)
    if (valid_digest(b) && !live_blobs.count(b))
      ::unlinkat(fd_.get(), ("blobs/sha256/" + std::string(digest_hex(b))).c_str(), 0);
}

namespace {
// Calls `fn` for `name` under `dirfd` and everything below it, never following a symlink.
template <typename Fn>
void walk_inodes(int dirfd, const char* name, const Fn& fn, int depth) {
  struct stat st;
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  fn(st);
  if (!S_ISDIR(st.st_mode) || depth > 256) return;
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  while (struct dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      walk_inodes(::dirfd(d), e->d_name, fn, depth + 1);
  ::closedir(d);
}

// Links of each non-directory inode met in a walk, with its link count and blocks.
struct InodeUse {
  nlink_t met = 0, nlink = 0;
  uint64_t bytes = 0;
};
}  // namespace

uint64_t Store::tree_unshared_use(const std::string& tree) const {
  if (!fd_.valid()) return 0;
  std::map<std::pair<dev_t, ino_t>, InodeUse> files;
  uint64_t n = 0;
  auto note = [&](const struct stat& st) {
    uint64_t bytes = static_cast<uint64_t>(st.st_blocks) * 512;
    if (S_ISDIR(st.st_mode)) {
      n += bytes;
      return;
    }
    InodeUse& u = files[{st.st_dev, st.st_ino}];
    ++u.met;
    u.nlink = st.st_nlink;
    u.bytes = bytes;
  };
  for (const char* suffix : {"", ".owners.jsonl", ".recipes"})
    walk_inodes(fd_.get(), ("trees/" + tree + suffix).c_str(), note, 0);
  for (const auto& [key, u] : files)
    if (u.met >= u.nlink) n += u.bytes;  // no link outside this tree: removing it frees the inode
  return n;
}

uint64_t Store::disk_use(const std::string& rel, std::set<std::pair<dev_t, ino_t>>& seen) const {
  if (!fd_.valid()) return 0;
  uint64_t n = 0;
  walk_inodes(fd_.get(), rel.c_str(), [&](const struct stat& st) {
    if (seen.insert({st.st_dev, st.st_ino}).second) n += static_cast<uint64_t>(st.st_blocks) * 512;
  }, 0);
  return n;
}

uint64_t Store::tree_disk_use(const std::string& tree, std::set<std::pair<dev_t, ino_t>>& seen) const {
  uint64_t n = 0;
  for (const char* suffix : {"", ".owners.jsonl", ".recipes"}) n += disk_use("trees/" + tree + suffix, seen);
  return n;
}

Result<Store::GcResult> Store::collect(bool dangling_images, bool remove_bad) const {
  GcResult res;
  if (!fd_.valid()) return res;
  KERN_TRY_ASSIGN(Listing ref_list, list_refs());
  KERN_TRY_ASSIGN(Listing image_list, list_images());
  KERN_TRY(refuse_unreadable(*this, {&ref_list, &image_list}, "gc removes nothing"));
  for (const Listing* l : {&ref_list, &image_list}) {
    for (const Error& e : l->unreadable) res.bad_records.push_back(e.what());
    for (const auto& rel : l->corrupt)
      if (remove_bad && ::unlinkat(fd_.get(), rel.c_str(), 0) == 0) ++res.removed_bad;
  }
  const std::vector<ImageRecord>& refs = ref_list.records;
  const std::vector<ImageRecord>& images = image_list.records;
  res.staging = clean_stale_staging();
  std::set<std::string> named;
  for (const auto& r : refs) named.insert(r.digest);
  if (dangling_images && !ref_list.corrupt.empty()) {
    dangling_images = false;
    res.kept_unnamed = true;
  }
  std::set<std::string> live_trees, live_blobs;
  auto keep = [&](const ImageRecord& r) {
    live_trees.insert(r.tree);
    live_blobs.insert(r.digest);
    live_blobs.insert(r.config_digest);
    for (const auto& l : r.layers) live_blobs.insert(l);
  };
  for (const auto& img : images) {
    if (dangling_images && !named.count(img.digest)) {
      KERN_TRY(remove_image(img.digest));
      ++res.images;
      res.deleted_images.push_back(img.digest);
      continue;
    }
    keep(img);
  }
  // A name whose image record was lost still keeps what it points at.
  for (const auto& r : refs) keep(r);

  for (const auto& name : list_dir(fd_.get(), "trees")) {
    if (name.rfind(".rm-", 0) == 0) {  // a removal on a full disk that a crash interrupted
      (void)sys::remove_tree(fd_.get(), "trees/" + name);
      continue;
    }
    if (ends_with(name, ".lock") || ends_with(name, ".owners.jsonl") || ends_with(name, ".recipes")) {
      std::string base = name.substr(0, name.find('.'));
      if (!has_tree(base) && !live_trees.count(base)) {
        if (!ends_with(name, ".lock")) {
          ::unlinkat(fd_.get(), ("trees/" + name).c_str(), 0);
        } else {
          auto lk = try_lock_tree_exclusive(base);
          if (lk && lk->valid()) ::unlinkat(fd_.get(), ("trees/" + name).c_str(), 0);
        }
      }
      continue;
    }
    if (live_trees.count(name)) continue;
    KERN_TRY_ASSIGN(UniqueFd lk, try_lock_tree_exclusive(name));
    if (!lk.valid()) {
      ++res.busy_trees;
      continue;
    }
    res.bytes += tree_unshared_use(name);
    KERN_TRY(remove_tree(name));
    ++res.trees;
  }
  for (const auto& hex : list_dir(fd_.get(), "blobs/sha256")) {
    if (live_blobs.count("sha256:" + hex)) continue;
    struct stat st;
    std::string rel = "blobs/sha256/" + hex;
    if (::fstatat(fd_.get(), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) res.bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    if (::unlinkat(fd_.get(), rel.c_str(), 0) == 0) ++res.blobs;
  }
  for (const char* dir : {"refs", "images"})
    for (const auto& name : list_dir(fd_.get(), dir))
      if (name.rfind(".tmp-", 0) == 0) ::unlinkat(fd_.get(), (std::string(dir) + "/" + name).c_str(), 0);
  return res;
}

Status refuse_unreadable(const Store& store, std::initializer_list<const Store::Listing*> listings,
                         const std::string& action) {
  // Records whose content is bad alone do not stop it; once another one does, all are named.
  bool stop = false;
  for (const Store::Listing* l : listings)
    for (const Error& e : l->unreadable) stop |= !record_corrupt(e);
  if (!stop) return {};
  size_t n = 0;
  std::string which;
  for (const Store::Listing* l : listings)
    for (const Error& e : l->unreadable) which += (n++ == 0 ? "" : "; ") + e.what();
  return fail(Error(ErrorKind::image, 0, action + ": " + std::to_string(n) + " record(s) of the image store " +
                                             log::quoted(store.root()) + " cannot be read, so what they keep is unknown: " + which)
                  .with_hint("repair or remove the record file(s) named, then run it again"));
}


}  // namespace kern::oci
