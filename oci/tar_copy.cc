// kern cp's tar stream; see tar_copy.h. Runs in kern on the host and in kern cp's joiner in a
// box (which shares kern's memory: a clone without exec).
#include "oci/tar_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <vector>

#include "oci/dl/archive_api.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kBlock = 64 << 10;

std::string q(const std::string& s) { return "\"" + s + "\""; }

// libarchive's word on `a`, with the errno it kept (its own codes are not errnos).
Error archive_failure(const dl::ArchiveApi& api, struct archive* a, const std::string& what) {
  const char* s = a ? api.error_string(a) : nullptr;
  int err = a ? api.errno_of(a) : 0;
  if (err < 0 || err > 4095) err = 0;
  return Error(ErrorKind::setup, err, what + ": " + (s ? s : "libarchive error"));
}

// "a/b/c" -> "a"; "./a/b" -> "a" (the name an entry creates in the directory it lands in).
std::string top_of(std::string p) {
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  size_t slash = p.find('/');
  return slash == std::string::npos ? p : p.substr(0, slash);
}

// The call that makes an entry of this type, for the messages.
const char* making_call(unsigned type) {
  switch (type) {
    case AE_IFDIR: return "mkdir";
    case AE_IFLNK: return "symlink";
    case AE_IFCHR:
    case AE_IFBLK: return "mknod";
    case AE_IFIFO: return "mkfifo";
    default: return "open";
  }
}

Status map_ids(const dl::ArchiveApi& api, struct archive_entry* e, const IdMap& ids, const std::string& where) {
  if (!ids) return {};
  auto uid = ids(static_cast<uint32_t>(api.entry_uid(e)), false);
  auto gid = ids(static_cast<uint32_t>(api.entry_gid(e)), true);
  if (!uid || !gid)
    return fail(Error(ErrorKind::config, EOVERFLOW,
                      "-a: " + q(api.entry_pathname(e)) + where + " is owned by " + std::to_string(api.entry_uid(e)) +
                          ":" + std::to_string(api.entry_gid(e)) + ", which the other side has no id for"));
  api.entry_set_uid(e, *uid);
  api.entry_set_gid(e, *gid);
  return {};
}

// Owns the two archives of one copy.
struct Archives {
  const dl::ArchiveApi* api;
  struct archive* in = nullptr;
  struct archive* out = nullptr;
  struct archive_entry* entry = nullptr;
  ~Archives() {
    if (entry) api->entry_free(entry);
    if (in) api->read_free(in);
    if (out) api->write_free(out);
  }
};

// a.in reading a tar stream from `fd`: plain, or (`compressed`, a stream a user handed in) gzip,
// xz or zstd as well. `what` names the stream in an error.
Status open_tar_reader(Archives& a, int fd, bool compressed, const char* what) {
  a.in = a.api->read_new();
  if (!a.in) return fail(ErrorKind::setup, ENOMEM, "archive_read_new");
  a.api->read_support_format_tar(a.in);
  a.api->read_support_filter_none(a.in);
  if (compressed) {
    a.api->read_support_filter_gzip(a.in);
    a.api->read_support_filter_xz(a.in);
    a.api->read_support_filter_zstd(a.in);
  }
  if (a.api->read_open_fd(a.in, fd, kBlock) != ARCHIVE_OK) return fail(archive_failure(*a.api, a.in, what));
  return {};
}

Status open_tar_writer(Archives& a, int fd) {
  const dl::ArchiveApi& api = *a.api;
  a.out = api.write_new();
  if (!a.out) return fail(ErrorKind::setup, ENOMEM, "archive_write_new");
  if (api.write_set_format_gnutar(a.out) != ARCHIVE_OK || api.write_add_filter_none(a.out) != ARCHIVE_OK ||
      api.write_set_bytes_in_last_block(a.out, 1) != ARCHIVE_OK || api.write_open_fd(a.out, fd) != ARCHIVE_OK)
    return fail(archive_failure(api, a.out, "starting the stream"));
  return {};
}

// The data of the current entry of `in`, copied to `out`.
Status copy_data(const dl::ArchiveApi& api, struct archive* in, struct archive* out, const std::string& reading,
                 const std::string& writing) {
  std::vector<char> buf(kBlock);
  for (;;) {
    la_ssize_t n = api.read_data(in, buf.data(), buf.size());
    if (n == 0) return {};
    if (n < 0) return fail(archive_failure(api, in, reading));
    if (api.write_data(out, buf.data(), static_cast<size_t>(n)) != n) return fail(archive_failure(api, out, writing));
  }
}

}  // namespace

Status tar_copy_ready() {
  KERN_TRY(dl::archive_api());
  return {};
}

Status pack_tree(int fd, const PackRequest& r) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  const CopyPath& src = r.src;
  bool follow = r.follow || src.trailing_slash || src.contents;
  std::string parent = src.contents ? src.path : parent_of(src.path);
  std::string base = src.contents ? "." : base_of(src.path);
  if (src.path == "/") parent = "/", base = ".";
  std::string root = stream_root_name(src);
  if (::chdir(parent.c_str()) != 0)
    return fail(Error(ErrorKind::config, errno, "chdir " + q(parent) + r.where));
  struct stat st;
  if ((follow ? ::stat(base.c_str(), &st) : ::lstat(base.c_str(), &st)) != 0)
    return fail(Error(ErrorKind::config, errno, std::string(follow ? "stat " : "lstat ") + q(src.path) + r.where));
  if ((src.trailing_slash || src.contents) && !S_ISDIR(st.st_mode))
    return fail(Error(ErrorKind::config, ENOTDIR, "stat " + q(src.path) + r.where + ": not a directory, as its \"/\" says"));

  Archives a{api};
  a.in = api->read_disk_new();
  if (!a.in) return fail(ErrorKind::setup, ENOMEM, "archive_read_disk_new");
  (follow ? api->read_disk_set_symlink_hybrid : api->read_disk_set_symlink_physical)(a.in);
  api->read_disk_set_behavior(a.in, ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL | ARCHIVE_READDISK_NO_FFLAGS |
                                        ARCHIVE_READDISK_NO_SPARSE);
  if (api->read_disk_open(a.in, base.c_str()) != ARCHIVE_OK)
    return fail(archive_failure(*api, a.in, "reading " + q(src.path) + r.where));
  KERN_TRY(open_tar_writer(a, fd));
  a.entry = api->entry_new();
  for (;;) {
    api->entry_clear(a.entry);
    int rc = api->read_next_header2(a.in, a.entry);
    if (rc == ARCHIVE_EOF) break;
    const char* name = api->entry_pathname(a.entry);
    std::string shown = name ? name : "?";
    if (rc != ARCHIVE_OK) return fail(archive_failure(*api, a.in, "reading " + q(shown) + r.where));
    if (api->read_disk_can_descend(a.in)) api->read_disk_descend(a.in);
    auto rest = land_entry(shown, base, ".");
    if (!rest) return fail(ErrorKind::internal, EPROTO, "pack_tree: an entry " + q(shown) + " outside " + q(base));
    std::string stream_name = rest->empty() ? root : root + "/" + *rest;
    api->entry_set_pathname(a.entry, stream_name.c_str());
    KERN_TRY(map_ids(*api, a.entry, r.ids, r.where));
    if (api->write_header(a.out, a.entry) != ARCHIVE_OK)
      return fail(archive_failure(*api, a.out, "writing the stream"));
    if (api->entry_filetype(a.entry) == AE_IFREG && api->entry_size(a.entry) > 0)
      KERN_TRY(copy_data(*api, a.in, a.out, "reading " + q(shown) + r.where, "writing the stream"));
  }
  if (api->write_close(a.out) != ARCHIVE_OK) return fail(archive_failure(*api, a.out, "ending the stream"));
  return {};
}

Status unpack_tree(int fd, const UnpackRequest& r) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  Archives a{api};
  KERN_TRY(open_tar_reader(a, fd, false, "reading the stream"));
  struct archive_entry* e = nullptr;
  int rc = api->read_next_header(a.in, &e);
  if (rc == ARCHIVE_EOF) return fail(ErrorKind::setup, 0, "the stream ended before its first entry");
  if (rc != ARCHIVE_OK) return fail(archive_failure(*api, a.in, "reading the stream"));

  const std::string& dst = r.dst.path;
  struct stat st;
  DestState state = DestState::missing;
  if (::stat(dst.c_str(), &st) == 0) state = S_ISDIR(st.st_mode) ? DestState::directory : DestState::other;
  else if (errno != ENOENT) return fail(Error(ErrorKind::config, errno, "stat " + q(dst) + r.where));
  Landing land{dst, "."};
  std::string root;
  if (r.as_is) {
    if (state != DestState::directory)
      return fail(Error(ErrorKind::config, state == DestState::missing ? ENOENT : ENOTDIR,
                        "stat " + q(dst) + r.where + ": a tar stream is unpacked into an existing directory"));
  } else {
    root = top_of(api->entry_pathname(e));
    if (root.empty()) root = ".";
    KERN_TRY_ASSIGN(land, copy_landing(r.dst, state, api->entry_filetype(e) == AE_IFDIR, root));
  }
  if (::chdir(land.dir.c_str()) != 0) return fail(Error(ErrorKind::config, errno, "chdir " + q(land.dir) + r.where));
  // The directory's own verdict first (a read-only file system, a directory not ours), named.
  if (::faccessat(AT_FDCWD, ".", W_OK, AT_EACCESS) != 0)
    return fail(Error(ErrorKind::config, errno, "faccessat " + q(land.dir) + " W_OK" + r.where));

  a.out = api->write_disk_new();
  if (!a.out) return fail(ErrorKind::setup, ENOMEM, "archive_write_disk_new");
  int flags = ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
              ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME;
  if (r.keep_owner) flags |= ARCHIVE_EXTRACT_OWNER;
  api->write_disk_set_options(a.out, flags);

  std::set<std::string> seen;
  std::vector<std::string> created;
  auto undo = [&](Error err) -> Status {
    api->write_free(a.out);  // its deferred directory modes first
    a.out = nullptr;
    for (auto it = created.rbegin(); it != created.rend(); ++it) (void)sys::remove_tree(AT_FDCWD, *it);
    return fail(std::move(err));
  };
  std::string base = land.dir == "/" ? "" : land.dir;
  for (;;) {
    std::string name = api->entry_pathname(e);
    std::string landed = name;
    if (!r.as_is) {
      auto l = land_entry(name, root, land.name);
      if (!l) return undo(Error(ErrorKind::setup, EPROTO, "the stream's entry " + q(name) + " is outside its root " + q(root)));
      landed = *l;
      if (const char* link = api->entry_hardlink(e)) {
        auto ll = land_entry(link, root, land.name);
        if (!ll || ll->empty())
          return undo(Error(ErrorKind::setup, EPROTO, "the stream's hard link " + q(name) + " points outside it"));
        api->entry_set_hardlink(e, ll->c_str());
      }
    }
    // The root itself ("", "." or "./") is the directory the entries land in, which exists; an
    // absolute name goes to libarchive, which refuses it.
    std::string top = top_of(landed);
    bool absolute = !landed.empty() && landed[0] == '/';
    if (absolute || (!top.empty() && top != ".")) {
      if (!absolute && seen.insert(top).second) {
        struct stat tst;
        if (::lstat(top.c_str(), &tst) != 0 && errno == ENOENT) created.push_back(top);
      }
      std::string shown = base + "/" + landed;
      std::string making = std::string(api->entry_hardlink(e) ? "link" : making_call(api->entry_filetype(e))) + " ";
      api->entry_set_pathname(e, landed.c_str());
      if (auto m = map_ids(*api, e, r.ids, r.where); !m) return undo(std::move(m).error());
      if (api->write_header(a.out, e) != ARCHIVE_OK)
        return undo(archive_failure(*api, a.out, making + q(shown) + r.where));
      if (api->entry_size(e) > 0)
        if (auto c = copy_data(*api, a.in, a.out, "reading the stream", "writing " + q(shown) + r.where); !c)
          return undo(std::move(c).error());
      if (api->write_finish_entry(a.out) != ARCHIVE_OK)
        return undo(archive_failure(*api, a.out, "finishing " + q(shown) + r.where));
    }
    rc = api->read_next_header(a.in, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK) return undo(archive_failure(*api, a.in, "reading the stream"));
  }
  if (api->write_close(a.out) != ARCHIVE_OK) return undo(archive_failure(*api, a.out, "finishing " + q(land.dir) + r.where));
  if (r.source_done && !r.source_done())
    return undo(Error(ErrorKind::setup, 0, "the other side of the copy failed; what it sent was removed"));
  return {};
}

Status retar_stream(int in, int out) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  Archives a{api};
  KERN_TRY(open_tar_reader(a, in, true, "reading standard input"));
  KERN_TRY(open_tar_writer(a, out));
  struct archive_entry* e = nullptr;
  for (;;) {
    int rc = api->read_next_header(a.in, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK) return fail(archive_failure(*api, a.in, "reading the tar on standard input"));
    if (api->write_header(a.out, e) != ARCHIVE_OK) return fail(archive_failure(*api, a.out, "writing the stream"));
    if (api->entry_size(e) > 0)
      KERN_TRY(copy_data(*api, a.in, a.out, "reading the tar on standard input", "writing the stream"));
  }
  if (api->write_close(a.out) != ARCHIVE_OK) return fail(archive_failure(*api, a.out, "ending the stream"));
  return {};
}

Status relay_stream(int in, int out) {
  std::vector<char> buf(kBlock);
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read (the stream)");
    if (n == 0) return {};
    if (int err = sys::write_all_raw(out, buf.data(), static_cast<size_t>(n)); err != 0)
      return fail(ErrorKind::setup, err, "write (standard output)");
  }
}

}  // namespace kern::oci
