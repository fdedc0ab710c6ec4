// parse_mount_options and plan_oci_mounts: config.json mounts -> mount(2) arguments and the order
// the child mounts them in. Pure.
#include "runtime/bundle/mount_options.h"

#include <linux/mount.h>
#include <sys/mount.h>

#include <cstring>

namespace kern::bundle {

namespace {

struct FlagOption {
  const char* name;
  bool clear;  // the option removes the flag (rw, suid, ...)
  unsigned long flag;
};

constexpr FlagOption kFlags[] = {
    {"ro", false, MS_RDONLY},          {"rw", true, MS_RDONLY},
    {"nosuid", false, MS_NOSUID},      {"suid", true, MS_NOSUID},
    {"nodev", false, MS_NODEV},        {"dev", true, MS_NODEV},
    {"noexec", false, MS_NOEXEC},      {"exec", true, MS_NOEXEC},
    {"sync", false, MS_SYNCHRONOUS},   {"async", true, MS_SYNCHRONOUS},
    {"dirsync", false, MS_DIRSYNC},    {"remount", false, MS_REMOUNT},
    {"mand", false, MS_MANDLOCK},      {"nomand", true, MS_MANDLOCK},
    {"noatime", false, MS_NOATIME},    {"atime", true, MS_NOATIME},
    {"nodiratime", false, MS_NODIRATIME}, {"diratime", true, MS_NODIRATIME},
    {"relatime", false, MS_RELATIME},  {"norelatime", true, MS_RELATIME},
    {"strictatime", false, MS_STRICTATIME}, {"nostrictatime", true, MS_STRICTATIME},
    {"lazytime", false, MS_LAZYTIME},  {"nolazytime", true, MS_LAZYTIME},
    {"silent", false, MS_SILENT},      {"loud", true, MS_SILENT},
};

struct PropagationOption {
  const char* name;
  unsigned long flags;
};

constexpr PropagationOption kPropagation[] = {
    {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
    {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
    {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
};

struct AttrOption {
  const char* name;
  bool clear;
  uint64_t attr;
};

constexpr AttrOption kAttrs[] = {
    {"rro", false, MOUNT_ATTR_RDONLY},        {"rrw", true, MOUNT_ATTR_RDONLY},
    {"rnosuid", false, MOUNT_ATTR_NOSUID},    {"rsuid", true, MOUNT_ATTR_NOSUID},
    {"rnodev", false, MOUNT_ATTR_NODEV},      {"rdev", true, MOUNT_ATTR_NODEV},
    {"rnoexec", false, MOUNT_ATTR_NOEXEC},    {"rexec", true, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", false, MOUNT_ATTR_NODIRATIME}, {"rdiratime", true, MOUNT_ATTR_NODIRATIME},
    {"rnoatime", false, MOUNT_ATTR_NOATIME},  {"rrelatime", false, MOUNT_ATTR_RELATIME},
    {"rstrictatime", false, MOUNT_ATTR_STRICTATIME}, {"rnosymfollow", false, MOUNT_ATTR_NOSYMFOLLOW},
    {"rsymfollow", true, MOUNT_ATTR_NOSYMFOLLOW},
};

}  // namespace

MountOptions parse_mount_options(const std::vector<std::string>& options) {
  MountOptions out;
  for (const auto& o : options) {
    const char* s = o.c_str();
    bool done = false;
    for (const auto& f : kFlags) {
      if (std::strcmp(s, f.name) != 0) continue;
      if (f.clear) out.flags &= ~f.flag;
      else out.flags |= f.flag;
      done = true;
      break;
    }
    for (const auto& p : kPropagation) {
      if (done || std::strcmp(s, p.name) != 0) continue;
      out.propagation = p.flags;  // the last one given wins, as with mount(8)
      done = true;
    }
    for (const auto& a : kAttrs) {
      if (done || std::strcmp(s, a.name) != 0) continue;
      if (a.clear) {
        out.attr_clr |= a.attr;
        out.attr_set &= ~a.attr;
      } else {
        out.attr_set |= a.attr;
        out.attr_clr &= ~a.attr;
      }
      done = true;
    }
    if (done) continue;
    if (o == "bind" || o == "rbind") {
      out.bind = true;
      out.recursive_bind = out.recursive_bind || o == "rbind";
    } else if (o == "idmap" || o == "ridmap") {
      out.idmap = true;
      out.recursive_idmap = out.recursive_idmap || o == "ridmap";
    } else if (o == "tmpcopyup") {
      out.tmpcopyup = true;
    } else if (!o.empty()) {
      if (!out.data.empty()) out.data += ',';
      out.data += o;
    }
  }
  return out;
}

std::vector<std::string> carried_out_mount_options() {
  std::vector<std::string> out;
  for (const auto& f : kFlags) out.emplace_back(f.name);
  for (const auto& p : kPropagation) out.emplace_back(p.name);
  for (const auto& a : kAttrs) out.emplace_back(a.name);
  out.emplace_back("bind");
  out.emplace_back("rbind");
  out.emplace_back("tmpcopyup");
  return out;
}

}  // namespace kern::bundle
