// The flattening tree writer; see tree_writer.h for the rules and why they hold.
#include "oci/tree_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr unsigned long long kResolve =
    RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

Unexpected<Error> io_error(const char* call, const std::string& path, int err = errno) {
  return fail(ErrorKind::image, err, std::string(call) + " \"" + path + "\"");
}

// Errors from runtime/sys carry ErrorKind::setup; inside the unpacker they are image errors.
Error as_image(Error e) {
  Error out(ErrorKind::image, e.sys_errno(), e.message());
  for (const auto& c : e.context()) out.with_context(c);
  return out;
}

std::string join(const std::string& parent, const std::string& leaf) {
  return parent.empty() ? leaf : parent + "/" + leaf;
}

size_t depth_of(const std::string& path) {
  return path.empty() ? 0 : 1 + static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

}  // namespace

TreeWriter::TreeWriter(UniqueFd root, const UnpackLimits& limits)
    : root_(std::move(root)), limits_(limits) {}

Result<TreeWriter> TreeWriter::open(int root, const UnpackLimits& limits) {
  KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(root, ".", O_PATH | O_DIRECTORY));
  TreeWriter w(std::move(fd), limits);
  // Files are created with their mode through open(2); only where the umask would strip bits
  // does a second call (fchmod) fix them, which for ordinary 0644/0755 files is never.
  mode_t um = ::umask(0);
  ::umask(um);
  w.umask_ = um;
  return w;
}

Status TreeWriter::clone_dir(int src, int dst, const std::string& path, int depth) {
  if (depth > 512) return fail(ErrorKind::image, ELOOP, "tree too deep at \"" + path + "\"");
  KERN_TRY_ASSIGN(UniqueFd list, sys::open_at(src, ".", O_RDONLY | O_DIRECTORY));
  DIR* d = ::fdopendir(list.release());
  if (d == nullptr) return io_error("fdopendir", path);
  std::vector<std::string> names;
  while (struct dirent* ent = ::readdir(d))
    if (std::strcmp(ent->d_name, ".") != 0 && std::strcmp(ent->d_name, "..") != 0) names.emplace_back(ent->d_name);
  ::closedir(d);
  for (const auto& name : names) {
    std::string child = join(path, name);
    struct stat st;
    if (::fstatat(src, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return io_error("fstatat", child);
    if (!S_ISDIR(st.st_mode)) {
      // linkat without AT_SYMLINK_FOLLOW links a symlink itself, never its target.
      if (::linkat(src, name.c_str(), dst, name.c_str(), 0) != 0) return io_error("linkat", child);
      continue;
    }
    if (::mkdirat(dst, name.c_str(), 0700) != 0) return io_error("mkdirat", child);
    dirs_[child] = DirMeta{static_cast<mode_t>(st.st_mode & 07777), true, st.st_mtim};
    KERN_TRY_ASSIGN(UniqueFd s2, sys::open_at(src, name, O_PATH | O_DIRECTORY | O_NOFOLLOW));
    KERN_TRY_ASSIGN(UniqueFd d2, sys::open_at(dst, name, O_PATH | O_DIRECTORY | O_NOFOLLOW));
    KERN_TRY(clone_dir(s2.get(), d2.get(), child, depth + 1));
  }
  return {};
}

Status TreeWriter::seed_from(int src_root, const std::string& owners_jsonl, uint64_t file_bytes) {
  struct stat st;
  if (::fstat(src_root, &st) != 0) return io_error("fstat", ".");
  dirs_[""] = DirMeta{static_cast<mode_t>(st.st_mode & 07777), true, st.st_mtim};
  Status cloned = clone_dir(src_root, root_.get(), "", 0);
  if (!cloned) return fail(as_image(std::move(cloned).error()).with_context("linking the lower layers' tree"));
  size_t pos = 0;
  while (pos < owners_jsonl.size()) {
    size_t end = owners_jsonl.find('\n', pos);
    if (end == std::string::npos) end = owners_jsonl.size();
    auto j = nlohmann::json::parse(owners_jsonl.substr(pos, end - pos), nullptr, false);
    pos = end + 1;
    if (j.is_discarded() || !j.is_object() || !j.contains("path") || !j["path"].is_string())
      return fail(ErrorKind::image, 0, "the lower layers' ownership records cannot be read");
    std::string path = j["path"].get<std::string>();
    if (path.rfind('/', 0) == 0) path.erase(0, 1);
    Owner o{j.value("uid", int64_t{0}), j.value("gid", int64_t{0}),
            static_cast<mode_t>(std::strtoul(j.value("mode", std::string("0")).c_str(), nullptr, 8) & 07777), {}};
    if (j.contains("xattrs") && j["xattrs"].is_array())
      for (const auto& x : j["xattrs"])
        if (x.is_string()) o.xattrs.push_back(x.get<std::string>());
    owners_[path] = std::move(o);
  }
  stats_.bytes = file_bytes;
  return {};
}

void TreeWriter::begin_layer() {
  layer_paths_.clear();
  cache_valid_ = false;
}

void TreeWriter::forget_below(const std::string& path) {
  auto drop = [&](auto& m) {
    m.erase(path);
    std::string prefix = path + "/";
    for (auto it = m.lower_bound(prefix); it != m.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
      it = m.erase(it);
  };
  drop(dirs_);
  drop(owners_);
}

Status TreeWriter::remove_path(int pfd, const std::string& path, const std::string& leaf) {
  cache_valid_ = false;  // the cached parent may be the directory being removed
  Status st = sys::remove_tree(pfd, leaf);
  if (!st) return fail(as_image(std::move(st).error()).with_context("removing \"" + path + "\""));
  forget_below(path);
  if (track_) removed_at_[path] = ++seq_;
  return {};
}

bool TreeWriter::intact(const WrittenFile& f) const {
  if (f.path.empty() || !f.readable) return false;
  std::string p = f.path;
  for (;;) {
    auto it = removed_at_.find(p);
    if (it != removed_at_.end() && it->second > f.seq) return false;
    size_t slash = p.rfind('/');
    if (slash == std::string::npos) return true;
    p.resize(slash);
  }
}

bool TreeWriter::dirs_searchable() const {
  for (const auto& [path, meta] : dirs_)
    if ((meta.mode & 0500) != 0500) return false;
  return true;
}

Status TreeWriter::replace_existing(int pfd, const std::string& path, const std::string& leaf) {
  return remove_path(pfd, path, leaf);
}

Result<int> TreeWriter::parent_fd(const std::string& parent) {
  if (parent.empty()) return root_.get();
  if (cache_valid_ && cached_parent_ == parent) return cached_parent_fd_.get();
  auto fast = sys::open_beneath(root_.get(), parent, O_PATH | O_DIRECTORY, kResolve);
  if (fast) {
    cached_parent_fd_ = std::move(*fast);
    cached_parent_ = parent;
    cache_valid_ = true;
    return cached_parent_fd_.get();
  }
  int err = fast.error().sys_errno();
  if (err != ENOENT && err != ELOOP && err != ENOTDIR) return fail(as_image(std::move(fast).error()));

  // Slow walk, one component at a time, never following a symlink: create what is missing,
  // replace a non-directory of a lower layer, refuse one of this layer.
  KERN_TRY_ASSIGN(UniqueFd cur, sys::open_at(root_.get(), ".", O_PATH | O_DIRECTORY));
  std::string so_far;
  size_t pos = 0;
  while (pos <= parent.size()) {
    size_t next = parent.find('/', pos);
    if (next == std::string::npos) next = parent.size();
    std::string comp = parent.substr(pos, next - pos);
    pos = next + 1;
    so_far = join(so_far, comp);
    struct stat st;
    bool make = false;
    if (::fstatat(cur.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return io_error("fstatat", so_far);
      make = true;
    } else if (!S_ISDIR(st.st_mode)) {
      if (layer_paths_.count(so_far))
        return fail(ErrorKind::image, ENOTDIR,
                    "parent \"" + so_far + "\" is a " + (S_ISLNK(st.st_mode) ? "symlink" : "non-directory") +
                        " written by the same layer");
      KERN_TRY(remove_path(cur.get(), so_far, comp));
      make = true;
    }
    if (make) {
      if (::mkdirat(cur.get(), comp.c_str(), 0700) != 0) return io_error("mkdirat", so_far);
      layer_paths_.insert(so_far);
      dirs_[so_far] = DirMeta{0755, false, {}};
    }
    auto child = sys::open_at(cur.get(), comp, O_PATH | O_DIRECTORY | O_NOFOLLOW);
    if (!child) return fail(as_image(std::move(child).error()));
    cur = std::move(*child);
  }
  cached_parent_fd_ = std::move(cur);
  cached_parent_ = parent;
  cache_valid_ = true;
  return cached_parent_fd_.get();
}

void TreeWriter::record_owner(const std::string& path, const EntryInfo& e) {
  if (!needs_ownership_record(e.uid, e.gid, e.mode) && e.xattr_names.empty()) {
    if (!owners_.empty()) owners_.erase(path);
    return;
  }
  owners_[path] = Owner{e.uid, e.gid, e.mode & 07777, e.xattr_names};
  stats_.dropped_xattrs += e.xattr_names.size();
}

Status TreeWriter::add(const EntryInfo& e, EntryData& data) {
  if (++stats_.entries > limits_.max_entries)
    return fail(ErrorKind::image, 0, "more than " + std::to_string(limits_.max_entries) + " entries");
  last_file_.path.clear();
  KERN_TRY_ASSIGN(CleanName n, clean_entry_name(e.name, limits_));
  if (n.path.empty()) {
    // The layer's "./": only its directory metadata means anything.
    if ((e.file_type & S_IFMT) == S_IFDIR) dirs_[""] = DirMeta{sanitize_mode(e.mode), e.mtime_set, e.mtime};
    return {};
  }
  KERN_TRY_ASSIGN(EntryKind kind, classify_entry(n, e.file_type, e.hardlink != nullptr));
  Status st;
  switch (kind) {
    case EntryKind::directory: st = add_directory(n, e); break;
    case EntryKind::regular: st = add_regular(n, e, data); break;
    case EntryKind::symlink: st = add_symlink(n, e); break;
    case EntryKind::hardlink: st = add_hardlink(n, e); break;
    case EntryKind::whiteout: st = add_whiteout(n); break;
    case EntryKind::opaque: st = add_opaque(n); break;
    case EntryKind::skip_whiteout_meta: break;
    case EntryKind::skip_device: ++stats_.skipped_devices; break;
    case EntryKind::skip_fifo: ++stats_.skipped_fifos; break;
    case EntryKind::skip_socket: ++stats_.skipped_sockets; break;
  }
  if (!st) return fail(std::move(st).error().with_context("entry \"" + n.path + "\""));
  // Every ancestor of what this layer wrote belongs to the layer too (the layer's own tree has
  // those directories), so that an opaque marker above them keeps them.
  std::string up = n.parent;
  while (!up.empty() && layer_paths_.insert(up).second) {
    size_t slash = up.rfind('/');
    up.resize(slash == std::string::npos ? 0 : slash);
  }
  return {};
}

Status TreeWriter::add_directory(const CleanName& n, const EntryInfo& e) {
  KERN_TRY_ASSIGN(int pfd, parent_fd(n.parent));
  if (::mkdirat(pfd, n.leaf.c_str(), 0700) != 0) {
    if (errno != EEXIST) return io_error("mkdirat", n.path);
    struct stat st;
    if (::fstatat(pfd, n.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return io_error("fstatat", n.path);
    if (!S_ISDIR(st.st_mode)) {
      KERN_TRY(replace_existing(pfd, n.path, n.leaf));
      if (::mkdirat(pfd, n.leaf.c_str(), 0700) != 0) return io_error("mkdirat", n.path);
    }
  }
  layer_paths_.insert(n.path);
  dirs_[n.path] = DirMeta{sanitize_mode(e.mode), e.mtime_set, e.mtime};
  record_owner(n.path, e);
  return {};
}

Status TreeWriter::write_data(int fd, const CleanName& n, const EntryInfo& e, EntryData& data) {
  int64_t pos = 0;
  for (;;) {
    const void* buf = nullptr;
    size_t len = 0;
    int64_t off = 0;
    KERN_TRY_ASSIGN(bool more, data.next(&buf, &len, &off));
    if (!more) break;
    if (off < 0 || off > e.size || static_cast<int64_t>(len) > e.size - off)
      return fail(ErrorKind::image, EFBIG, "data beyond the declared size of \"" + n.path + "\"");
    const char* p = static_cast<const char*>(buf);
    while (len > 0) {
      ssize_t w = ::pwrite(fd, p, len, off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return io_error("write", n.path);
      p += w;
      len -= static_cast<size_t>(w);
      off += w;
    }
    pos = std::max(pos, off);
  }
  // A sparse file may end in a hole.
  if (pos < e.size && ::ftruncate(fd, e.size) != 0) return io_error("ftruncate", n.path);
  return {};
}

Status TreeWriter::add_regular(const CleanName& n, const EntryInfo& e, EntryData& data) {
  if (e.size < 0 || static_cast<uint64_t>(e.size) > limits_.max_total_bytes - stats_.bytes)
    return fail(ErrorKind::image, EFBIG,
                "declared size " + std::to_string(e.size) + " is past the image limit of " +
                    std::to_string(limits_.max_total_bytes) + " bytes");
  stats_.bytes += static_cast<uint64_t>(e.size);
  KERN_TRY_ASSIGN(int pfd, parent_fd(n.parent));
  mode_t perm = sanitize_mode(e.mode);
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(pfd, n.leaf.c_str(), kFlags, perm);
  if (fd < 0 && errno == EEXIST) {
    KERN_TRY(replace_existing(pfd, n.path, n.leaf));
    fd = ::openat(pfd, n.leaf.c_str(), kFlags, perm);
  }
  if (fd < 0) return io_error("openat", n.path);
  UniqueFd file(fd);
  KERN_TRY(write_data(fd, n, e, data));
  if ((perm & ~umask_) != perm && ::fchmod(fd, perm) != 0) return io_error("fchmod", n.path);
  if (e.mtime_set) {
    struct timespec ts[2] = {e.mtime, e.mtime};
    if (::futimens(fd, ts) != 0) return io_error("futimens", n.path);
  }
  layer_paths_.insert(n.path);
  record_owner(n.path, e);
  if (track_) last_file_ = WrittenFile{n.path, ++seq_, (perm & 0400) != 0};
  return {};
}

Status TreeWriter::add_symlink(const CleanName& n, const EntryInfo& e) {
  if (e.symlink == nullptr || *e.symlink == '\0')
    return fail(ErrorKind::image, EINVAL, "symlink without a target");
  if (std::strlen(e.symlink) > limits_.max_name)
    return fail(ErrorKind::image, ENAMETOOLONG, "symlink target too long");
  // The target is stored as given and never followed here; in the box the kernel resolves it
  // inside the box's root.
  KERN_TRY_ASSIGN(int pfd, parent_fd(n.parent));
  if (::symlinkat(e.symlink, pfd, n.leaf.c_str()) != 0) {
    if (errno != EEXIST) return io_error("symlinkat", n.path);
    KERN_TRY(replace_existing(pfd, n.path, n.leaf));
    if (::symlinkat(e.symlink, pfd, n.leaf.c_str()) != 0) return io_error("symlinkat", n.path);
  }
  layer_paths_.insert(n.path);
  record_owner(n.path, e);
  return {};
}

Status TreeWriter::add_hardlink(const CleanName& n, const EntryInfo& e) {
  auto target = clean_entry_name(e.hardlink, limits_);
  if (!target) return fail(std::move(target).error().with_context("hardlink target"));
  const CleanName& t = *target;
  if (t.path.empty()) return fail(ErrorKind::image, EPERM, "hardlink to the layer root");
  if (t.path == n.path) return {};
  // The target is looked up, never created: it must already be in the layer stack, reached
  // without a symlink.
  UniqueFd tparent;
  int tpfd = root_.get();
  if (!t.parent.empty()) {
    auto r = sys::open_beneath(root_.get(), t.parent, O_PATH | O_DIRECTORY, kResolve);
    if (!r)
      return fail(as_image(std::move(r).error())
                      .with_context("hardlink target \"" + t.path + "\" is not in the layer stack"));
    tparent = std::move(*r);
    tpfd = tparent.get();
  }
  struct stat st;
  if (::fstatat(tpfd, t.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return fail(ErrorKind::image, errno, "hardlink target \"" + t.path + "\" is not in the layer stack");
  if (S_ISDIR(st.st_mode)) return fail(ErrorKind::image, EPERM, "hardlink to directory \"" + t.path + "\"");
  KERN_TRY_ASSIGN(int pfd, parent_fd(n.parent));
  if (::linkat(tpfd, t.leaf.c_str(), pfd, n.leaf.c_str(), 0) != 0) {
    if (errno != EEXIST) return io_error("linkat", n.path);
    KERN_TRY(replace_existing(pfd, n.path, n.leaf));
    if (::linkat(tpfd, t.leaf.c_str(), pfd, n.leaf.c_str(), 0) != 0) return io_error("linkat", n.path);
  }
  layer_paths_.insert(n.path);
  auto it = owners_.find(t.path);
  if (it != owners_.end()) owners_[n.path] = it->second;
  else if (!owners_.empty()) owners_.erase(n.path);
  return {};
}

Status TreeWriter::add_whiteout(const CleanName& n) {
  KERN_TRY_ASSIGN(std::string target, whiteout_target(n));
  ++stats_.whiteouts;
  std::string full = join(n.parent, target);
  // A whiteout hides only what lower layers wrote (OCI image spec, "Whiteouts").
  if (layer_paths_.count(full)) return {};
  KERN_TRY_ASSIGN(int pfd, parent_fd(n.parent));
  struct stat st;
  if (::fstatat(pfd, target.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return io_error("fstatat", full);
  }
  return remove_path(pfd, full, target);
}

// Removes everything under `path` (open as `dfd`) that the current layer did not write,
// descending into the directories it did write: an opaque directory shows nothing of the lower
// layers at any depth.
Status TreeWriter::hide_lower(int dfd, const std::string& path) {
  KERN_TRY_ASSIGN(UniqueFd dir, sys::open_at(dfd, ".", O_RDONLY | O_DIRECTORY));
  std::vector<std::pair<std::string, bool>> children;
  {
    DIR* d = ::fdopendir(dir.release());
    if (d == nullptr) return io_error("fdopendir", path);
    while (struct dirent* ent = ::readdir(d)) {
      if (std::strcmp(ent->d_name, ".") == 0 || std::strcmp(ent->d_name, "..") == 0) continue;
      children.emplace_back(ent->d_name, ent->d_type == DT_DIR);
    }
    ::closedir(d);
  }
  for (const auto& [name, is_dir] : children) {
    std::string child = join(path, name);
    if (!layer_paths_.count(child)) {
      KERN_TRY(remove_path(dfd, child, name));
    } else if (is_dir) {
      auto sub = sys::open_at(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW);
      if (!sub) return fail(as_image(std::move(sub).error()));
      KERN_TRY(hide_lower(sub->get(), child));
    }
  }
  return {};
}

Status TreeWriter::add_opaque(const CleanName& n) {
  ++stats_.whiteouts;
  KERN_TRY_ASSIGN(int dfd, parent_fd(n.parent));
  // hide_lower may invalidate the parent cache; keep our own fd of the directory.
  KERN_TRY_ASSIGN(UniqueFd dir, sys::open_at(dfd, ".", O_PATH | O_DIRECTORY));
  return hide_lower(dir.get(), n.parent);
}

Status TreeWriter::finish(int owner_dirfd, const std::string& owner_file) {
  cache_valid_ = false;
  cached_parent_fd_.reset();
  std::vector<std::pair<size_t, const std::string*>> order;
  order.reserve(dirs_.size());
  for (const auto& [path, meta] : dirs_) order.emplace_back(depth_of(path), &path);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [depth, path] : order) {
    const DirMeta& m = dirs_.at(*path);
    auto fd = path->empty() ? sys::open_at(root_.get(), ".", O_RDONLY | O_DIRECTORY)
                            : sys::open_beneath(root_.get(), *path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, kResolve);
    if (!fd) return fail(as_image(std::move(fd).error()));
    if (::fchmod(fd->get(), m.mode) != 0) return io_error("fchmod", *path);
    if (m.mtime_set) {
      struct timespec ts[2] = {m.mtime, m.mtime};
      if (::futimens(fd->get(), ts) != 0) return io_error("futimens", *path);
    }
  }
  stats_.ownership_records = owners_.size();
  if (owners_.empty()) return {};
  std::string out;
  for (const auto& [path, o] : owners_) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(o.mode));
    nlohmann::ordered_json j = {{"path", "/" + path}, {"uid", o.uid}, {"gid", o.gid}, {"mode", mode}};
    if (!o.xattrs.empty()) j["xattrs"] = o.xattrs;
    out += j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out += '\n';
  }
  Status st = sys::write_file(owner_dirfd, owner_file, out, 0644);
  if (!st) return fail(as_image(std::move(st).error()));
  return {};
}

}  // namespace kern::oci
