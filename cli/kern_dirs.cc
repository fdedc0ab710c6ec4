// kern's own directories and the identity check; see kern_dirs.h.
#include "cli/kern_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "oci/auth.h"
#include "runtime/sys/env.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/unique_fd.h"

namespace kern::cli {

std::string canonical_or_same(const std::string& p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) != nullptr) return buf;
  return p;
}

bool is_within(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

namespace {

// The most ".." lineage() hands one fstatat ("../../.."): then its descriptor moves up. Each
// lookup walks them all, so a bound keeps a deep path's walk linear.
constexpr size_t kMaxUp = 16;

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

std::string parent_of(const std::string& file) {
  size_t slash = file.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

// `path` and each directory above it up to "/", by identity: ".." is walked from an open
// descriptor, so the answer is the mount tree's, not the spelling's. Empty when `path` cannot
// be opened; then `*missing` says whether it is for want of the path (ENOENT). Each level is
// one fstatat of "..", "../..", ... against that descriptor (not an open, fstat and close);
// every kMaxUp levels the walk moves its descriptor up to where it has reached.
std::vector<FileId> lineage(const std::string& path, bool* missing = nullptr) {
  std::vector<FileId> out;
  UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (missing) *missing = !fd.valid() && errno == ENOENT;
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return out;
  out.push_back({st.st_dev, st.st_ino});
  if (!S_ISDIR(st.st_mode)) {
    fd = UniqueFd(::open(parent_of(canonical_or_same(path)).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return out;
    out.push_back({st.st_dev, st.st_ino});
  }
  std::string up;
  for (int depth = 0; depth < 4096; ++depth) {
    if (up.size() >= 3 * kMaxUp - 1) {
      UniqueFd there(::openat(fd.get(), up.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!there.valid()) break;
      fd = std::move(there);
      up.clear();
    }
    up += up.empty() ? ".." : "/..";
    if (::fstatat(fd.get(), up.c_str(), &st, 0) != 0) break;
    FileId id{st.st_dev, st.st_ino};
    if (id == out.back()) break;  // "/" is its own parent
    out.push_back(id);
  }
  return out;
}

bool contains_id(const std::vector<FileId>& v, const FileId& id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

}  // namespace

std::vector<std::string> kern_dirs() {
  std::vector<std::string> raw;
  std::string home = paths::home_dir();
  raw.push_back(paths::cache_dir());
  raw.push_back(home + "/.cache/kern");
  if (std::string x = sys::env_value("XDG_RUNTIME_DIR"); !x.empty()) raw.push_back(x + "/kern");
  raw.push_back("/run/user/" + std::to_string(::getuid()) + "/kern");
  raw.push_back("/tmp/kern-" + std::to_string(::getuid()));
  if (std::string x = sys::env_value("XDG_CONFIG_HOME"); !x.empty()) raw.push_back(x + "/kern");
  raw.push_back(home + "/.config/kern");
  raw.push_back(parent_of(oci::auth_file_path()));
  raw.push_back(parent_of(paths::config_file()));
  // The same spelling twice (the cache dir is ~/.cache/kern unless XDG says otherwise, the
  // config dirs likewise) is listed once. Nothing is resolved here: check_not_kern_dir()
  // judges by identity and resolves a spelling only when it must show or compare it.
  std::vector<std::string> out;
  for (auto& d : raw)
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(std::move(d));
  return out;
}

Status check_not_kern_dir(const std::string& path, const std::vector<std::string>& dirs,
                          const std::string& what, bool path_canonical) {
  auto refuse = [&](const std::string& how, const std::string& d) {
    return fail(Error(ErrorKind::usage, 0,
                      what + " \"" + log::sanitize(path) + "\": it " + how + " kern's own directory \"" +
                          log::sanitize(canonical_or_same(d)) +
                          "\" (image store, box state or registry credentials)"));
  };
  std::vector<FileId> mine = lineage(path);
  // The spelling is compared only with a directory that cannot be opened: resolved then, once.
  std::string canon;
  bool resolved = false;
  for (const auto& d : dirs) {
    bool missing = false;
    std::vector<FileId> theirs = lineage(d, &missing);
    if (!mine.empty() && !theirs.empty()) {
      if (mine.front() == theirs.front()) return refuse("is", d);
      if (contains_id(mine, theirs.front())) return refuse("is inside", d);
      if (contains_id(theirs, mine.front())) return refuse("contains", d);
      continue;
    }
    if (!resolved) {
      canon = path_canonical ? path : canonical_or_same(path);
      resolved = true;
    }
    // A path the open found missing is one realpath() cannot resolve either: it stays as spelled.
    std::string dc = missing ? d : canonical_or_same(d);
    if (canon == dc) return refuse("is", d);
    if (is_within(canon, dc)) return refuse("is inside", d);
    if (is_within(dc, canon)) return refuse("contains", d);
  }
  return {};
}

}  // namespace kern::cli
