// Where kern keeps things (kern-box(1)). Any process, before clone.
//   images and layers: $XDG_CACHE_HOME/kern, else ~/.cache/kern
//   live state:        $XDG_RUNTIME_DIR/kern, else a private 0700 /tmp/kern-<uid>
//   configuration:     $KERN_CONFIG, else $XDG_CONFIG_HOME/kern/kern.toml, else ~/.config/kern/kern.toml
#pragma once

#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::paths {

std::string home_dir();
std::string cache_dir();
std::string config_file();
// The runtime dir, created 0700 if missing; refuses one that is not ours or is open to others.
Result<std::string> runtime_dir();

// "/a/./b//c/../d" -> "/a/b/d": an absolute path read lexically, ".." stopping at "/".
std::string clean_absolute_path(std::string_view path);

}  // namespace kern::paths
