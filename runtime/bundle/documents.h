// The documents `kern oci spec` and `kern oci features` print. Pure.
#pragma once

#include <sys/types.h>

#include <string>

namespace kern::bundle {

// A starting config.json for a bundle whose root is ./rootfs, running `sh`. `rootless` adds a
// user namespace mapping `uid`/`gid` to root and drops what an unprivileged user cannot have
// (the cgroup resources, a devpts gid, a fresh sysfs). `cgroup_ns`: a cgroup namespace too, as
// runc and crun add one where the host is cgroup v2 only (on v1 and hybrid hosts they do not).
std::string default_spec(bool rootless, uid_t uid, gid_t gid, bool cgroup_ns);

// The runtime-spec features document, true to what kern carries out today: every list is
// empty for what `create` cannot do yet, and the annotations say which verbs are implemented.
std::string features_json();

}  // namespace kern::bundle
