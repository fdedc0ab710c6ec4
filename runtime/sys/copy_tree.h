// tmpcopyup: what a new tmpfs covers copied into it, as runc and crun do: directories, files,
// symlinks and nodes with their modes, owners and times. An owner the user namespace cannot give
// stays the copier's (rootless, a file of an unmapped id); a node this process may not make is
// left out. Child-safe: no exception.
#pragma once

#include <string>

namespace kern::sys {

// The entries of the directory `from` copied into the directory `to` (fds of directories, not
// O_PATH: `from` opened before the tmpfs covered it); with `top`, `to` takes `from`'s own mode
// and owner too (runc's rule for a directory the image had). 0, or errno with the entry that
// failed in `where`.
int copy_tree(int from, int to, bool top, std::string* where);

}  // namespace kern::sys
