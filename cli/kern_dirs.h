// kern's own directories on the host (the image store, live state, configuration with the
// registry credentials) and the check that a path handed to a box is none of them, is not
// inside one and does not contain one (issue 8 item 5). Used for -v sources and --rootfs.
#pragma once

#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

// Every place kern keeps things, from the variables (XDG_CACHE_HOME, XDG_RUNTIME_DIR,
// XDG_CONFIG_HOME, KERN_CONFIG) and the defaults they override (~/.cache/kern,
// /tmp/kern-UID, ~/.config/kern): a variable set now does not hide what an earlier run
// without it left in the default place. As spelled (each spelling once): check_not_kern_dir()
// resolves one only to compare it as a string or to name it in its refusal.
std::vector<std::string> kern_dirs();

// realpath(p), or p itself when it cannot be resolved (it does not exist, or a component is
// unreadable).
std::string canonical_or_same(const std::string& p);
// Whether `path` is `dir` or below it, as strings ("/" holds every absolute path).
bool is_within(const std::string& path, const std::string& dir);

// Refuses `path` when it is, is inside or contains one of `dirs`, judged by device and inode
// along both paths' ancestors (so a second name for the same directory, through a bind mount
// or a symlink, is seen through). `what` starts the message ("--rootfs", "-v: refusing to
// bind"). Directories that do not exist are compared as canonical strings; `path_canonical`
// says `path` is one already (realpath's answer), so it is not resolved a second time.
Status check_not_kern_dir(const std::string& path, const std::vector<std::string>& dirs,
                          const std::string& what, bool path_canonical = false);

}  // namespace kern::cli
