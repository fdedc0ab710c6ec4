// The documents `kern oci spec` and `kern oci features` print. Pure.
#pragma once

#include <sys/types.h>

#include <string>

namespace kern::bundle {

// A starting config.json for a bundle whose root is ./rootfs, running `sh`. `rootless` adds a
// user namespace mapping `uid`/`gid` to root and drops what an unprivileged user cannot have
// (the cgroup resources, a devpts gid, a fresh sysfs).
std::string default_spec(bool rootless, uid_t uid, gid_t gid);

// The runtime-spec features document, true to what kern carries out today: every list is
// empty for what `create` cannot do yet, and the annotations say which verbs are implemented.
std::string features_json();

}  // namespace kern::bundle
