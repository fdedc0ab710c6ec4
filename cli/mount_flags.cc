// --mount parsing; see mount_flags.h.
#include "cli/mount_flags.h"

#include <set>

#include "cli/bind_policy.h"
#include "profiles/units.h"
#include "runtime/sys/log.h"
#include "runtime/volume_store.h"

namespace kern::cli {
namespace {

Error bad_mount(const std::string& value, const std::string& why) {
  return Error(ErrorKind::usage, 0, "--mount " + log::quoted(value) + ": " + why);
}

Result<bool> parse_bool(const std::string& value, const std::string& key, const std::string& v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return fail(bad_mount(value, key + "=" + log::quoted(v) + " is not true, false, 1 or 0"));
}

}  // namespace

// One CSV record, read as docker's --mount reads it (RFC 4180, as Go's encoding/csv without
// LazyQuotes): a quote may only open a field, "" inside a quoted field is a quote, and a closing
// quote must end the field. A quote anywhere else is refused rather than left to swallow the
// fields after it (`dst=/x"y,ro"` would otherwise lose its ,ro).
Result<std::vector<std::string>> split_mount_fields(const std::string& value) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    std::string cur;
    size_t start = i;
    if (i < value.size() && value[i] == '"') {
      ++i;
      bool closed = false;
      while (i < value.size()) {
        char c = value[i++];
        if (c != '"') cur += c;
        else if (i < value.size() && value[i] == '"') cur += '"', ++i;
        else {
          closed = true;
          break;
        }
      }
      if (!closed)
        return fail(bad_mount(value, "the quote at byte " + std::to_string(start + 1) + " is not closed"));
      if (i < value.size() && value[i] != ',')
        return fail(bad_mount(value, "a quoted field must end at its closing quote (byte " + std::to_string(i) +
                                         "): write the whole field in quotes, \"key=value\""));
    } else {
      while (i < value.size() && value[i] != ',') {
        if (value[i] == '"')
          return fail(Error(bad_mount(value, "a quote inside a field (byte " + std::to_string(i + 1) + ")"))
                          .with_hint("quote the whole field, \"key=value\", and double a quote inside it (\"\")"));
        cur += value[i++];
      }
    }
    fields.push_back(std::move(cur));
    if (i >= value.size()) break;
    ++i;  // the comma
  }
  return fields;
}

Result<MountFlag> parse_mount_flag(const std::string& value) {
  KERN_TRY_ASSIGN(std::vector<std::string> fields, split_mount_fields(value));
  std::string type, source, dest, propagation, recursive, size, mode;
  bool have_source = false, read_only = false, have_ro = false;
  std::set<std::string> seen;
  for (const auto& f : fields) {
    if (f.empty()) return fail(bad_mount(value, "an empty field"));
    size_t eq = f.find('=');
    std::string key = f.substr(0, eq);
    std::string v = eq == std::string::npos ? "" : f.substr(eq + 1);
    // The spellings of one key count as one.
    std::string canon = key;
    if (key == "src") canon = "source";
    else if (key == "dst" || key == "target") canon = "destination";
    else if (key == "ro") canon = "readonly";
    if (canon == "volume-nocopy" || canon == "volume-label" || canon == "volume-driver" || canon == "volume-opt" ||
        canon == "volume-subpath")
      return fail(Error(bad_mount(value, log::quoted(key) + " is not supported"))
                      .with_hint("kern's volumes are local directories: type=volume,source=NAME,target=PATH[,readonly]"));
    if (!seen.insert(canon).second) return fail(bad_mount(value, log::quoted(canon) + " is given twice"));
    bool bare_ok = canon == "readonly";
    if (eq == std::string::npos && !bare_ok) return fail(bad_mount(value, log::quoted(key) + " needs a value (" + key + "=...)"));
    if (canon == "type") type = v;
    else if (canon == "source") source = v, have_source = true;
    else if (canon == "destination") dest = v;
    else if (canon == "readonly") {
      have_ro = true;
      if (eq == std::string::npos) {
        read_only = true;
      } else {
        KERN_TRY_ASSIGN(read_only, parse_bool(value, key, v));
      }
    } else if (canon == "bind-propagation") propagation = v;
    else if (canon == "bind-recursive") recursive = v;
    else if (canon == "consistency") {
      // Docker Desktop's file sharing modes; Docker on Linux ignores it too.
    } else if (canon == "tmpfs-size") size = v;
    else if (canon == "tmpfs-mode") mode = v;
    else
      return fail(Error(bad_mount(value, "unknown key " + log::quoted(key)))
                      .with_hint("the keys are type, source (src), destination (dst, target), readonly (ro), "
                                 "bind-propagation, bind-recursive, consistency, tmpfs-size, tmpfs-mode"));
  }
  if (!seen.count("type")) return fail(bad_mount(value, "type= is required (bind or tmpfs)"));
  if (type != "bind" && type != "tmpfs" && type != "volume")
    return fail(bad_mount(value, "type " + log::quoted(type) + " is not bind, volume or tmpfs"));
  if (dest.empty()) return fail(bad_mount(value, "destination= (or dst=, target=) is required"));

  MountFlag m;
  if (type == "volume") {
    if (!size.empty() || !mode.empty()) return fail(bad_mount(value, "tmpfs-size and tmpfs-mode are for type=tmpfs"));
    if (!propagation.empty() || !recursive.empty())
      return fail(bad_mount(value, "bind-propagation and bind-recursive are for type=bind"));
    if (!have_source || source.empty())
      return fail(Error(bad_mount(value, "type=volume needs source= (or src=), the volume's name"))
                      .with_hint("kern volume create makes one; kern box makes a missing one at the start"));
    KERN_TRY(check_volume_name(source, "--mount " + log::quoted(value)));
    m.type = MountFlag::Type::bind;
    m.bind.volume = source;
    KERN_TRY_ASSIGN(m.bind.dest, bind_destination(dest, "--mount"));
    m.bind.read_only = read_only;
    m.bind.origin = "--mount volume " + source;
    return m;
  }
  if (type == "bind") {
    m.type = MountFlag::Type::bind;
    if (!size.empty() || !mode.empty()) return fail(bad_mount(value, "tmpfs-size and tmpfs-mode are for type=tmpfs"));
    if (!have_source || source.empty()) return fail(bad_mount(value, "type=bind needs source= (or src=)"));
    if (source[0] != '/') return fail(bad_mount(value, "source " + log::quoted(source) + " is not an absolute path"));
    if (!propagation.empty() && propagation != "rprivate")
      return fail(Error(bad_mount(value, "bind-propagation=" + log::quoted(propagation) + " is not supported"))
                      .with_hint("kern's binds are always rprivate: no mount propagates into or out of the box"));
    if (!recursive.empty() && recursive != "enabled" && recursive != "readonly")
      return fail(Error(bad_mount(value, "bind-recursive=" + log::quoted(recursive) + " is not supported"))
                      .with_hint("kern's binds are always recursive, and readonly makes every submount "
                                 "read-only too (bind-recursive=enabled or readonly)"));
    m.bind.source = source;
    KERN_TRY_ASSIGN(m.bind.dest, bind_destination(dest, "--mount"));
    m.bind.read_only = read_only;
    m.bind.origin = "--mount";
    return m;
  }
  m.type = MountFlag::Type::tmpfs;
  if (have_source) return fail(bad_mount(value, "type=tmpfs takes no source"));
  if (!propagation.empty() || !recursive.empty())
    return fail(bad_mount(value, "bind-propagation and bind-recursive are for type=bind"));
  if (have_ro && read_only)
    return fail(Error(bad_mount(value, "a read-only tmpfs is not supported"))
                    .with_hint("an empty read-only directory: bind one with type=bind,readonly"));
  if (!mode.empty() && mode != "1777" && mode != "01777")
    return fail(Error(bad_mount(value, "tmpfs-mode=" + log::quoted(mode) + " is not supported"))
                    .with_hint("kern mounts every tmpfs with mode 1777 (tmpfs-mode=1777)"));
  if (!size.empty()) {
    auto bytes = profiles::parse_size(size);
    if (!bytes) return fail(bad_mount(value, "tmpfs-size: " + bytes.error().message()));
    m.tmpfs.size_bytes = *bytes;
  }
  KERN_TRY_ASSIGN(m.tmpfs.dest, tmpfs_destination(dest, "--mount"));
  m.tmpfs.origin = "--mount";
  return m;
}

}  // namespace kern::cli
