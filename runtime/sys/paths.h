// Where kern keeps things (kern-box(1)). Any process, before clone.
//   images and layers: $XDG_CACHE_HOME/kern, else ~/.cache/kern
//   live state:        $XDG_RUNTIME_DIR/kern when that directory is the user's, else
//                      /run/user/<uid>/kern when that one is (and 0700), else a private /tmp/kern-<uid>
//   configuration:     $KERN_CONFIG, else $XDG_CONFIG_HOME/kern/kern.toml, else ~/.config/kern/kern.toml
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::paths {

std::string home_dir();
std::string cache_dir();
std::string config_file();
// What lstat says of a path (a symlink is not a directory); nullopt: it does not exist.
struct DirFacts {
  bool is_dir;
  unsigned uid;
  unsigned mode;
};
using DirProbe = std::function<std::optional<DirFacts>(const std::string&)>;
std::optional<DirFacts> probe_dir(const std::string& path);
// The directory the runtime dir goes in ("" for the /tmp/kern-<uid> fallback): `xdg` (the value
// of $XDG_RUNTIME_DIR) when it is uid's directory or missing, else /run/user/<uid> when it is a
// directory private to uid, else "". One answer for a login session and for sudo -iu, su and
// cron, which set no XDG_RUNTIME_DIR.
std::string choose_runtime_base(const std::string& xdg, unsigned uid, const DirProbe& probe);
// The runtime dir, created 0700 if missing; refuses one that is not ours or is open to others.
Result<std::string> runtime_dir();

// "/a/./b//c/../d" -> "/a/b/d": an absolute path read lexically, ".." stopping at "/".
std::string clean_absolute_path(std::string_view path);
// The components of a "/"-separated path, empty ones and "." left out, ".." kept. Pure.
std::vector<std::string> path_components(std::string_view path);

}  // namespace kern::paths
