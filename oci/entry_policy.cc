// The unpacker's pure per-entry decisions; see entry_policy.h.
#include "oci/entry_policy.h"

#include <sys/stat.h>

#include <vector>

namespace kern::oci {
namespace {

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaque = ".wh..wh..opq";
constexpr std::string_view kWhiteoutMeta = ".wh..wh.";

Unexpected<Error> refuse(std::string_view raw, const std::string& why) {
  std::string shown(raw.substr(0, 200));
  return fail(ErrorKind::image, 0, "entry \"" + shown + "\": " + why);
}

}  // namespace

Result<CleanName> clean_entry_name(std::string_view raw, const UnpackLimits& limits) {
  if (raw.size() > limits.max_name)
    return refuse(raw, "name longer than " + std::to_string(limits.max_name) + " bytes");
  CleanName out;
  out.path.reserve(raw.size());
  size_t depth = 0;
  size_t last_start = 0;
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t next = raw.find('/', pos);
    if (next == std::string_view::npos) next = raw.size();
    std::string_view comp = raw.substr(pos, next - pos);
    pos = next + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") return refuse(raw, "\"..\" in the name");
    if (comp.size() > limits.max_component)
      return refuse(raw, "component longer than " + std::to_string(limits.max_component) + " bytes");
    if (++depth > limits.max_depth)
      return refuse(raw, "deeper than " + std::to_string(limits.max_depth) + " components");
    if (!out.path.empty()) out.path += '/';
    last_start = out.path.size();
    out.path.append(comp);
  }
  if (out.path.empty()) return out;
  out.leaf = out.path.substr(last_start);
  out.parent = last_start == 0 ? std::string() : out.path.substr(0, last_start - 1);
  return out;
}

Result<EntryKind> classify_entry(const CleanName& name, unsigned file_type, bool has_hardlink) {
  std::string_view leaf = name.leaf;
  if (leaf.substr(0, kWhiteoutPrefix.size()) == kWhiteoutPrefix) {
    if (leaf == kOpaque) return EntryKind::opaque;
    if (leaf.substr(0, kWhiteoutMeta.size()) == kWhiteoutMeta) return EntryKind::skip_whiteout_meta;
    return EntryKind::whiteout;
  }
  if (has_hardlink) return EntryKind::hardlink;
  switch (file_type & S_IFMT) {
    case S_IFDIR: return EntryKind::directory;
    case S_IFREG: return EntryKind::regular;
    case S_IFLNK: return EntryKind::symlink;
    case S_IFCHR:
    case S_IFBLK: return EntryKind::skip_device;
    case S_IFIFO: return EntryKind::skip_fifo;
    case S_IFSOCK: return EntryKind::skip_socket;
    default: break;
  }
  return refuse(name.path, "unknown entry type " + std::to_string(file_type));
}

Result<std::string> whiteout_target(const CleanName& name) {
  std::string target = name.leaf.substr(kWhiteoutPrefix.size());
  if (target.empty() || target == "." || target == "..")
    return refuse(name.path, "whiteout names \"" + target + "\"");
  return target;
}

}  // namespace kern::oci
