// kern cp's paths; see copy_paths.h. Pure.
#include "oci/copy_paths.h"

#include <cerrno>
#include <sstream>
#include <vector>

namespace kern::oci {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string drop_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

CopyPath host_copy_path(const std::string& raw) {
  CopyPath p;
  std::string s = raw.empty() ? "." : raw;
  if (s == "." || (s.size() >= 2 && s.compare(s.size() - 2, 2, "/.") == 0)) {
    p.contents = true;
    s = s == "." ? "." : s.substr(0, s.size() - 2);
    if (s.empty()) s = "/";
  } else if (s.size() > 1 && s.back() == '/') {
    p.trailing_slash = true;
  }
  p.path = drop_trailing_slashes(s);
  return p;
}

Result<CopyPath> box_copy_path(const std::string& raw) {
  if (raw.empty())
    return fail(Error(ErrorKind::usage, 0, "no path in the box after the name's \":\"")
                    .with_hint("NAME:/PATH; NAME:/ is the box's root"));
  CopyPath p;
  std::vector<std::string> parts;
  std::string last;
  size_t at = 0;
  while (at <= raw.size()) {
    size_t slash = raw.find('/', at);
    if (slash == std::string::npos) slash = raw.size();
    std::string c = raw.substr(at, slash - at);
    at = slash + 1;
    if (!c.empty()) last = c;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (parts.empty())
        return fail(Error(ErrorKind::usage, 0, "the path " + quoted(raw) + " climbs above the box's \"/\"")
                        .with_hint("paths in a box are resolved in the box: name them from its \"/\", without "
                                   "\"..\" past it"));
      parts.pop_back();
      continue;
    }
    parts.push_back(c);
  }
  if (last == ".") p.contents = true;
  else if (raw.back() == '/' || last == "..") p.trailing_slash = true;
  p.path = "/";
  for (size_t i = 0; i < parts.size(); ++i) p.path += (i ? "/" : "") + parts[i];
  return p;
}

std::string parent_of(const std::string& path) {
  std::string s = drop_trailing_slashes(path);
  size_t slash = s.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return drop_trailing_slashes(s.substr(0, slash));
}

std::string base_of(const std::string& path) {
  std::string s = drop_trailing_slashes(path);
  if (s == "/") return s;
  size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

std::string stream_root_name(const CopyPath& src) {
  if (src.contents || src.path == "/") return ".";
  std::string b = base_of(src.path);
  return b == ".." ? "." : b;
}

Result<Landing> copy_landing(const CopyPath& dst, DestState state, bool src_is_dir, const std::string& src_root) {
  const std::string& d = dst.path;
  switch (state) {
    case DestState::directory:
      if (src_root == "." && !src_is_dir)
        return fail(Error(ErrorKind::config, ENOTDIR, "the source is not a directory, and SRC/. names the contents of one"));
      return Landing{d, src_root};
    case DestState::other:
      if (src_is_dir)
        return fail(Error(ErrorKind::config, ENOTDIR, "cannot copy a directory onto the file " + quoted(d)));
      if (dst.trailing_slash || dst.contents)
        return fail(Error(ErrorKind::config, ENOTDIR, "the destination " + quoted(d) + " is not a directory"));
      return Landing{parent_of(d), base_of(d)};
    case DestState::missing:
      if ((dst.trailing_slash || dst.contents) && !src_is_dir)
        return fail(Error(ErrorKind::config, ENOENT, "the destination directory " + quoted(d) + " does not exist")
                        .with_hint("a destination ending in \"/\" must be an existing directory"));
      if (d == "/" || d == "." || base_of(d) == "..")
        return fail(Error(ErrorKind::config, ENOENT, "the destination " + quoted(d) + " does not exist"));
      return Landing{parent_of(d), base_of(d)};
  }
  return fail(ErrorKind::internal, 0, "copy_landing: unknown state");
}

std::optional<std::string> land_entry(const std::string& entry, const std::string& root, const std::string& name) {
  std::string e = drop_trailing_slashes(entry);
  std::string rest;
  if (e == root) {
    rest = "";
  } else if (e.size() > root.size() && e.compare(0, root.size(), root) == 0 && e[root.size()] == '/') {
    rest = e.substr(root.size() + 1);
    while (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
    if (rest.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (name == ".") return rest;
  return rest.empty() ? name : name + "/" + rest;
}

std::optional<uint32_t> map_id(const std::string& map, uint32_t id, bool outward) {
  std::istringstream in(map);
  unsigned long long inside = 0, outside = 0, count = 0;
  while (in >> inside >> outside >> count) {
    unsigned long long from = outward ? inside : outside, to = outward ? outside : inside;
    if (id >= from && id - from < count) return static_cast<uint32_t>(to + (id - from));
  }
  return std::nullopt;
}

}  // namespace kern::oci
