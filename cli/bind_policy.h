// -v SRC:DST[:ro|:rw] parsing and the refusal of sources that would hand over the host
// (CONTRACT section 1). Pure except for canonicalising SRC (realpath) and checking which
// runtime sockets exist.
#pragma once

#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct BindRefusalContext {
  std::string home;                      // $HOME of the caller
  std::vector<std::string> kern_dirs;    // kern's own state: cache, runtime, config dirs
  std::vector<std::string> sockets;      // container runtime sockets that exist on this host
};

BindRefusalContext host_refusal_context();

// Splits and checks the syntax: DST absolute, no "." or ".." component, not "/" or under /proc.
Result<BindMount> parse_volume(const std::string& spec);
// Refuses SRC (already canonical) when it is, or contains, something that hands over the host.
Status check_bind_source(const std::string& canonical_src, const BindRefusalContext& ctx);
// Normalises an absolute box path ("/a//b/" -> "/a/b"); refuses "." and "..". `what` names the flag.
Result<std::string> normalize_box_path(const std::string& path, const std::string& what);

}  // namespace kern::cli
