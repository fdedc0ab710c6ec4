// -v SRC:DST[:ro|:rw] parsing and the refusal of sources that would hand over the host
// (kern-box(1)). Pure except for canonicalising SRC (realpath) and checking which
// runtime sockets exist.
#pragma once

#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct BindRefusalContext {
  std::string home;                      // $HOME of the caller
  std::vector<std::string> kern_dirs;    // kern's own directories (cli/kern_dirs.h)
  std::vector<std::string> sockets;      // container runtime sockets that exist on this host
};

BindRefusalContext host_refusal_context();

// Whether SELinux is enabled on this host (selinuxfs is there).
bool selinux_enabled();
// "a:b::c" -> {"a", "b", "", "c"}: the fields of -v and --device, split at every colon.
std::vector<std::string> split_colons(const std::string& s);
// Docker's rule for -v: a SRC with no '/' that is not "." or ".." names a volume.
bool is_volume_source(const std::string& source);
// Splits SRC:DST[:OPTIONS] and checks the syntax: DST absolute, no "." or ".." component, not
// "/" or under /proc; OPTIONS a comma list of ro, rw (once), z and Z (no-ops, refused when
// `selinux` is true: kern does not relabel). Anything else, and a path with ':', is refused.
// A volume's SRC (is_volume_source) comes back as BindMount::volume, its source left empty.
Result<BindMount> parse_volume(const std::string& spec, bool selinux = false);
// Refuses SRC (already canonical) when it is, or contains, something that hands over the host.
// `what` names the flag in the message ("-v", "--mount").
Status check_bind_source(const std::string& canonical_src, const BindRefusalContext& ctx,
                         const std::string& what = "-v");
// A bind's destination (of -v or --mount, named by `what`): normalised, not "/", not under /proc.
Result<std::string> bind_destination(const std::string& path, const std::string& what);
// A tmpfs's destination (--tmpfs, --mount type=tmpfs): normalised, not "/", /dev, or /proc or
// anything under it.
Result<std::string> tmpfs_destination(const std::string& path, const std::string& what);
// Normalises an absolute box path ("/a//b/" -> "/a/b"); refuses "." and "..". `what` names the flag.
Result<std::string> normalize_box_path(const std::string& path, const std::string& what);
// The -w of kern box and kern exec, one check for both verbs: an empty value is refused
// (`otherwise` says what leaving -w out gives), a directory inside a process's own /proc
// directory is refused (check_box_cwd), anything else normalised as above.
Result<std::string> workdir_flag(const std::string& value, const std::string& otherwise);

}  // namespace kern::cli
