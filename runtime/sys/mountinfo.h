// /proc/PID/mountinfo, parsed: one entry per mount, its octal escapes ("\040") undone. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kern::sys {

struct MountInfo {
  std::string root;           // the mount's root inside its file system ("/", "/inner")
  std::string point;          // where it is mounted, from the reader's root
  std::string type;           // "proc", "cgroup2", ...
  std::string source;
  std::string super_options;  // "rw,memory"
};

// Lines that do not have the shape are passed over.
std::vector<MountInfo> parse_mountinfo(std::string_view text);

// "\040" -> " " and the like, as the kernel escapes space, tab, newline and backslash.
std::string unescape_mountinfo(std::string_view s);

}  // namespace kern::sys
