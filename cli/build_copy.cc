// COPY and ADD as a layer; see build_copy.h.
#include "cli/build_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cli/spec_builder.h"
#include "oci/digest.h"
#include "oci/dl/archive_api.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::cli {
namespace {
namespace build_copy_parts {

std::string q(const std::string& s) { return "\"" + log::sanitize(s) + "\""; }

std::vector<std::string> components(const std::string& path) { return paths::path_components(path); }

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "/") + p;
  return s;
}

// A path resolved inside a tree: the components that exist (symlinks followed inside the tree,
// ".." never above its root) and those that do not.
struct InTree {
  std::vector<std::string> existing;
  std::vector<std::string> missing;
  bool is_dir = false;  // the whole path exists and is a directory
};

InTree resolve_in_tree(int root, const std::string& path) {
  InTree r;
  if (root < 0) {
    r.missing = components(path);
    return r;
  }
  std::vector<std::string> todo = components(path);
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  r.is_dir = true;
  while (!todo.empty()) {
    std::string c = todo.back();
    todo.pop_back();
    if (c == "..") {
      if (!r.existing.empty()) r.existing.pop_back();
      continue;
    }
    std::string rel = joined(r.existing);
    rel = rel.empty() ? c : rel + "/" + c;
    struct stat st;
    if (::fstatat(root, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      r.missing.push_back(c);
      while (!todo.empty()) {
        r.missing.push_back(todo.back());
        todo.pop_back();
      }
      r.is_dir = false;
      return r;
    }
    if (S_ISLNK(st.st_mode) && ++links < 40) {
      std::string target(4096, '\0');
      ssize_t n = ::readlinkat(root, rel.c_str(), target.data(), target.size());
      if (n > 0) {
        target.resize(static_cast<size_t>(n));
        if (target[0] == '/') r.existing.clear();
        auto parts = components(target);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
        continue;
      }
    }
    r.existing.push_back(c);
    r.is_dir = S_ISDIR(st.st_mode);
  }
  return r;
}

bool has_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool ignored(const CopyRoot& root, const std::string& rel) { return root.ignore && !rel.empty() && root.ignore->ignored(rel); }

// A source a pattern names: where it is (symlinks followed inside the root) and the name it is
// copied under (the last component as the pattern or the directory names it, a link's own).
struct Matched {
  std::string rel, name;
  bool operator<(const Matched& o) const { return rel != o.rel ? rel < o.rel : name < o.name; }
  bool operator==(const Matched& o) const { return rel == o.rel && name == o.name; }
};

// The sources a pattern names, sorted, .dockerignore applied (to the path named and to the one
// it leads to).
Result<std::vector<Matched>> match_pattern(const CopyRoot& root, const std::string& pattern) {
  std::vector<std::string> parts = components(pattern);
  // ".." cannot leave the root: it is cleaned away as Docker cleans it.
  std::vector<std::string> clean;
  for (const auto& p : parts) {
    if (p == "..") {
      if (!clean.empty()) clean.pop_back();
    } else {
      clean.push_back(p);
    }
  }
  // Each candidate: its path as named (`named`) and as resolved.
  std::vector<std::pair<std::string, Matched>> found{{"", Matched{"", ""}}};
  for (const auto& part : clean) {
    std::vector<std::pair<std::string, Matched>> next;
    for (const auto& [named, base] : found) {
      auto add = [&](const std::string& name) {
        std::string at = base.rel.empty() ? name : base.rel + "/" + name;
        InTree t = resolve_in_tree(root.fd, at);
        if (t.missing.empty()) next.push_back({named.empty() ? name : named + "/" + name, Matched{joined(t.existing), name}});
      };
      if (!has_glob(part)) {
        add(part);
        continue;
      }
      auto names = sys::sorted_names(root.fd, base.rel.empty() ? "." : base.rel);
      if (!names) continue;
      for (const auto& n : *names)
        if (::fnmatch(part.c_str(), n.c_str(), 0) == 0) add(n);
    }
    found = std::move(next);
    if (found.empty()) break;
  }
  std::vector<Matched> out;
  for (auto& [named, m] : found)
    if (!ignored(root, named) && !ignored(root, m.rel)) out.push_back(m);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty()) {
    bool any = !found.empty();
    return fail(Error(ErrorKind::usage, ENOENT,
                      "COPY " + q(pattern) + ": " +
                          (any ? std::string("every match is excluded by .dockerignore") : "not found in " + root.shown))
                    .with_hint(any ? "remove the pattern from .dockerignore, or add a ! exception"
                                   : "sources are relative to the context directory given to kern build"));
  }
  return out;
}

struct Planner {
  const CopyRoot& root;
  const CopyRequest& req;
  CopyPlan& plan;

  uint32_t uid(const struct stat&) const { return req.chown ? req.chown->first : 0; }
  uint32_t gid(const struct stat&) const { return req.chown ? req.chown->second : 0; }
  mode_t perm(const struct stat& st) const {
    return req.chmod ? *req.chmod : static_cast<mode_t>(st.st_mode & 07777);
  }

  int dir_fd(const std::string& rel_dir) {
    auto fd = sys::open_at(root.fd, rel_dir.empty() ? "." : rel_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!fd) return -1;
    plan.dirs.push_back(std::move(*fd));
    return plan.dirs.back().get();
  }

  // One source entry (rel in the root, already lstat'ed) landing at `to` (layer path).
  Status add(const std::string& rel, const struct stat& st, const std::string& to, bool top) {
    size_t slash = rel.rfind('/');
    std::string parent = slash == std::string::npos ? "" : rel.substr(0, slash);
    std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    CopyEntry e;
    e.path = to;
    e.perm = perm(st);
    e.uid = uid(st);
    e.gid = gid(st);
    e.mtime = st.st_mtim.tv_sec;
    e.shown = rel;
    if (S_ISDIR(st.st_mode)) {
      if (!top) {
        e.kind = CopyEntry::Kind::dir;
        plan.entries.push_back(e);
      }
      return walk_dir(rel, to);
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n = ::readlinkat(root.fd, rel.c_str(), target.data(), target.size());
      if (n < 0) return fail_errno("readlink " + q(rel) + " in " + root.shown);
      target.resize(static_cast<size_t>(n));
      e.kind = CopyEntry::Kind::symlink;
      e.text = target;
      plan.entries.push_back(e);
      return {};
    }
    if (!S_ISREG(st.st_mode)) return {};  // devices, fifos, sockets: not copied
    e.kind = CopyEntry::Kind::file;
    e.src_dir = dir_fd(parent);
    if (e.src_dir < 0) return fail_errno("open " + q(parent.empty() ? "." : parent) + " in " + root.shown);
    e.src_name = name;
    e.size = static_cast<uint64_t>(st.st_size);
    plan.entries.push_back(e);
    return {};
  }

  Status walk_dir(const std::string& rel, const std::string& to) {
    auto names = sys::sorted_names(root.fd, rel.empty() ? "." : rel);
    if (!names) return fail(std::move(names).error().with_context("in " + root.shown));
    for (const auto& n : *names) {
      std::string child = rel.empty() ? n : rel + "/" + n;
      struct stat st;
      if (::fstatat(root.fd, child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return fail_errno("lstat " + q(child) + " in " + root.shown);
      if (ignored(root, child) && !(S_ISDIR(st.st_mode) && root.ignore->may_contain_exception(child))) continue;
      if (ignored(root, child)) {
        // An ignored directory that holds an exception: only what the exception names.
        KERN_TRY(walk_dir(child, to.empty() ? n : to + "/" + n));
        continue;
      }
      KERN_TRY(add(child, st, to.empty() ? n : to + "/" + n, false));
    }
    return {};
  }
};

bool looks_like_archive(int dirfd, const std::string& name) {
  auto api = oci::dl::archive_api();
  if (!api) return false;
  auto fd = sys::open_at(dirfd, name, O_RDONLY);
  if (!fd) return false;
  struct archive* a = (*api)->read_new();
  if (!a) return false;
  (*api)->read_support_format_tar(a);
  (*api)->read_support_filter_gzip(a);
  (*api)->read_support_filter_xz(a);
  (*api)->read_support_filter_zstd(a);
  (*api)->read_support_filter_none(a);
  bool ok = false;
  if ((*api)->read_open_fd(a, fd->get(), 1 << 16) == ARCHIVE_OK) {
    struct archive_entry* e = nullptr;
    ok = (*api)->read_next_header(a, &e) == ARCHIVE_OK;
  }
  (*api)->read_free(a);
  return ok;
}

// An archive member's name, cleaned, under `dest`; empty when it would leave it.
std::string archive_path(const std::string& dest, const char* name) {
  if (!name) return {};
  std::vector<std::string> clean;
  for (const auto& p : components(name)) {
    if (p == "..") return {};
    clean.push_back(p);
  }
  if (clean.empty()) return {};
  std::string rel = joined(clean);
  return dest.empty() ? rel : dest + "/" + rel;
}

Status write_archive(const CopyEntry& e, oci::LayerTar& tar) {
  KERN_TRY_ASSIGN(const oci::dl::ArchiveApi* api, oci::dl::archive_api());
  KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(e.src_dir, e.src_name, O_RDONLY));
  struct archive* a = api->read_new();
  if (!a) return fail(ErrorKind::setup, ENOMEM, "archive_read_new");
  struct Free {
    const oci::dl::ArchiveApi* api;
    struct archive* a;
    ~Free() { api->read_free(a); }
  } guard{api, a};
  api->read_support_format_tar(a);
  api->read_support_filter_gzip(a);
  api->read_support_filter_xz(a);
  api->read_support_filter_zstd(a);
  api->read_support_filter_none(a);
  std::string what = "ADD " + q(e.shown);
  if (api->read_open_fd(a, fd.get(), 1 << 16) != ARCHIVE_OK) return fail(oci::dl::archive_error(*api, a, what));
  std::vector<char> buf(1 << 16);
  for (;;) {
    struct archive_entry* en = nullptr;
    int rc = api->read_next_header(a, &en);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return fail(oci::dl::archive_error(*api, a, what));
    std::string path = archive_path(e.path, api->entry_pathname(en));
    if (path.empty()) continue;
    oci::LayerEntryMeta m;
    m.path = path;
    m.perm = api->entry_mode(en) & 07777;
    m.uid = static_cast<uint32_t>(api->entry_uid(en));
    m.gid = static_cast<uint32_t>(api->entry_gid(en));
    if (e.chown) m.uid = e.uid, m.gid = e.gid;
    m.mtime = api->entry_mtime(en);
    if (const char* hl = api->entry_hardlink(en)) {
      std::string target = archive_path(e.path, hl);
      if (!target.empty()) KERN_TRY(tar.hardlink(m, target));
      continue;
    }
    unsigned type = api->entry_filetype(en);
    if (type == AE_IFDIR) {
      KERN_TRY(tar.dir(m));
    } else if (type == AE_IFLNK) {
      const char* t = api->entry_symlink(en);
      KERN_TRY(tar.symlink(m, t ? t : ""));
    } else if (type == AE_IFREG) {
      std::string data;
      for (;;) {
        la_ssize_t n = api->read_data(a, buf.data(), buf.size());
        if (n < 0) return fail(oci::dl::archive_error(*api, a, what));
        if (n == 0) break;
        data.append(buf.data(), static_cast<size_t>(n));
      }
      KERN_TRY(tar.data(m, data));
    }
  }
  return {};
}

}  // namespace build_copy_parts
}  // namespace

Result<std::pair<uint32_t, uint32_t>> resolve_chown(int image_root, const std::string& text) {
  using namespace build_copy_parts;
  size_t colon = text.find(':');
  std::string user = text.substr(0, colon), group = colon == std::string::npos ? "" : text.substr(colon + 1);
  auto number = [](const std::string& s) -> std::optional<uint32_t> {
    if (s.empty() || s.size() > 10 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    unsigned long v = std::stoul(s);
    if (v > 0xfffffffeul) return std::nullopt;
    return static_cast<uint32_t>(v);
  };
  uint32_t uid = 0, gid = 0;
  if (auto n = number(user)) {
    uid = gid = *n;
  } else {
    auto ids = image_root >= 0 ? passwd_ids(image_root, user) : std::nullopt;
    if (!ids)
      return fail(Error(ErrorKind::usage, ENOENT, "--chown=" + text + ": no user " + q(user) + " in the image's /etc/passwd")
                      .with_hint("use numeric ids, or create the user in an earlier RUN"));
    uid = static_cast<uint32_t>(ids->first);
    gid = static_cast<uint32_t>(ids->second);
  }
  if (colon != std::string::npos) {
    if (auto n = number(group)) {
      gid = *n;
    } else {
      std::optional<uint32_t> found;
      if (image_root >= 0) {
        auto fd = sys::open_beneath(image_root, "etc/group", O_RDONLY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
        if (fd) {
          auto body = sys::read_all(fd->get(), size_t{4} << 20, "/etc/group");
          if (body) {
            size_t pos = 0;
            while (pos < body->size() && !found) {
              size_t nl = body->find('\n', pos);
              if (nl == std::string::npos) nl = body->size();
              std::string line = body->substr(pos, nl - pos);
              pos = nl + 1;
              size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1),
                     c = b == std::string::npos ? b : line.find(':', b + 1);
              if (c == std::string::npos || line.substr(0, a) != group) continue;
              found = number(line.substr(b + 1, c - b - 1));
            }
          }
        }
      }
      if (!found)
        return fail(Error(ErrorKind::usage, ENOENT, "--chown=" + text + ": no group " + q(group) + " in the image's /etc/group")
                        .with_hint("use numeric ids"));
      gid = *found;
    }
  }
  return std::make_pair(uid, gid);
}

Result<CopyPlan> plan_copy(const CopyRoot& root, int image_root, const CopyRequest& req) {
  using namespace build_copy_parts;
  CopyPlan plan;
  std::string dest_abs = req.dest.empty() || req.dest[0] != '/' ? (req.workdir == "/" ? "/" : req.workdir + "/") + req.dest
                                                                : req.dest;
  // Docker reads DEST as a directory when it ends in "/", or is "." or ".." (or ends in one).
  auto ends = [&](const std::string& t) {
    return req.dest.size() >= t.size() && req.dest.compare(req.dest.size() - t.size(), t.size(), t) == 0;
  };
  bool dest_slash = (!req.dest.empty() && req.dest.back() == '/') || req.dest == "." || req.dest == ".." ||
                    ends("/.") || ends("/..");
  // The matches first: their number decides whether DEST is a directory.
  struct Match {
    std::string rel, name;
    struct stat st;
  };
  std::vector<Match> matches;
  for (const auto& pattern : req.sources) {
    if (pattern.find("://") != std::string::npos || pattern.rfind("git@", 0) == 0)
      return fail(Error(ErrorKind::usage, 0, std::string(req.add ? "ADD " : "COPY ") + q(pattern) +
                                                 ": kern build does not download sources")
                      .with_hint("download it first and COPY the file, or fetch it in a RUN step with --network private"));
    KERN_TRY_ASSIGN(std::vector<Matched> found, match_pattern(root, pattern));
    for (const auto& f : found) {
      Match m{f.rel, f.name, {}};
      if (::fstatat(root.fd, f.rel.empty() ? "." : f.rel.c_str(), &m.st, f.rel.empty() ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
        return fail_errno("lstat " + q(f.rel) + " in " + root.shown);
      matches.push_back(std::move(m));
    }
  }
  size_t count = matches.size() + req.inline_files.size();
  InTree dest = resolve_in_tree(image_root, dest_abs);
  bool dest_is_dir = dest_slash || count > 1 || (dest.missing.empty() && dest.is_dir) ||
                     (count == 1 && !matches.empty() && S_ISDIR(matches[0].st.st_mode)) ||
                     (count == 1 && !matches.empty() && req.add && S_ISREG(matches[0].st.st_mode) &&
                      looks_like_archive(root.fd, matches[0].rel));
  if (count > 1 && !dest_slash && !(dest.missing.empty() && dest.is_dir))
    return fail(Error(ErrorKind::usage, 0, "COPY of several sources to " + q(req.dest) + ": the destination must end with \"/\"")
                    .with_hint("write " + req.dest + "/"));
  // The directories DEST needs that the image lacks.
  InTree dir = dest_is_dir ? dest : resolve_in_tree(image_root, dest_abs.substr(0, dest_abs.rfind('/') + 1));
  std::vector<std::string> at = dir.existing;
  for (const auto& m : dir.missing) {
    at.push_back(m);
    CopyEntry e;
    e.kind = CopyEntry::Kind::dir;
    e.path = joined(at);
    e.perm = 0755;
    e.uid = req.chown ? req.chown->first : 0;
    e.gid = req.chown ? req.chown->second : 0;
    e.mtime = req.now;
    plan.entries.push_back(e);
  }
  std::string base = joined(at);
  auto under = [&](const std::string& name) { return base.empty() ? name : base + "/" + name; };
  // Not a directory: DEST names the file itself, in the directory planned above.
  std::string file_target;
  if (!dest_is_dir) {
    std::vector<std::string> p = components(dest_abs);
    if (p.empty()) return fail(ErrorKind::usage, 0, "COPY to " + q(req.dest) + ": not a file name");
    file_target = under(p.back());
  }
  Planner planner{root, req, plan};
  for (const auto& m : matches) {
    const std::string& name = m.name;
    if (S_ISDIR(m.st.st_mode)) {
      KERN_TRY(planner.walk_dir(m.rel, base));
      continue;
    }
    std::string to = dest_is_dir ? under(name) : file_target;
    if (req.add && S_ISREG(m.st.st_mode) && looks_like_archive(root.fd, m.rel)) {
      CopyEntry e;
      e.kind = CopyEntry::Kind::archive;
      e.path = base;
      size_t slash = m.rel.rfind('/');
      e.src_dir = planner.dir_fd(slash == std::string::npos ? "" : m.rel.substr(0, slash));
      e.src_name = slash == std::string::npos ? m.rel : m.rel.substr(slash + 1);
      e.shown = m.rel;
      e.size = static_cast<uint64_t>(m.st.st_size);
      if (req.chown) e.uid = req.chown->first, e.gid = req.chown->second, e.chown = true;
      plan.entries.push_back(e);
      continue;
    }
    KERN_TRY(planner.add(m.rel, m.st, to, true));
  }
  for (const auto& [name, content] : req.inline_files) {
    CopyEntry e;
    e.kind = CopyEntry::Kind::data;
    e.path = dest_is_dir ? under(name) : file_target;
    e.perm = req.chmod ? *req.chmod : 0644;
    e.uid = req.chown ? req.chown->first : 0;
    e.gid = req.chown ? req.chown->second : 0;
    e.mtime = req.now;
    e.text = content;
    plan.entries.push_back(e);
  }
  return plan;
}

Result<std::string> plan_digest(const CopyPlan& plan) {
  using namespace build_copy_parts;
  KERN_TRY_ASSIGN(oci::Sha256 h, oci::Sha256::create());
  for (const auto& e : plan.entries) {
    std::string line = std::to_string(static_cast<int>(e.kind)) + " " + std::to_string(e.path.size()) + ":" + e.path + " " +
                       std::to_string(e.perm) + " " + std::to_string(e.uid) + ":" + std::to_string(e.gid) + " " +
                       std::to_string(e.size) + " ";
    if (e.kind == CopyEntry::Kind::file || e.kind == CopyEntry::Kind::archive) {
      KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(e.src_dir, e.src_name, O_RDONLY | O_NOFOLLOW));
      KERN_TRY_ASSIGN(std::string d, oci::sha256_of_fd(fd.get()));
      line += d;
    } else if (e.kind == CopyEntry::Kind::symlink || e.kind == CopyEntry::Kind::data) {
      KERN_TRY_ASSIGN(std::string d, oci::sha256_of(e.text));
      line += d;
    }
    line += "\n";
    h.update(line.data(), line.size());
  }
  return h.finish();
}

Status write_plan(const CopyPlan& plan, oci::LayerTar& tar) {
  using namespace build_copy_parts;
  for (const auto& e : plan.entries) {
    oci::LayerEntryMeta m{e.path, e.perm, e.uid, e.gid, e.mtime};
    switch (e.kind) {
      case CopyEntry::Kind::dir:
        KERN_TRY(tar.dir(m));
        break;
      case CopyEntry::Kind::symlink:
        KERN_TRY(tar.symlink(m, e.text));
        break;
      case CopyEntry::Kind::data:
        KERN_TRY(tar.data(m, e.text));
        break;
      case CopyEntry::Kind::file: {
        KERN_TRY_ASSIGN(UniqueFd fd, sys::open_at(e.src_dir, e.src_name, O_RDONLY | O_NOFOLLOW));
        KERN_TRY(tar.file(m, fd.get(), e.size, e.shown));
        break;
      }
      case CopyEntry::Kind::archive:
        KERN_TRY(write_archive(e, tar));
        break;
    }
  }
  return {};
}

}  // namespace kern::cli
