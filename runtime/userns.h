// Identity mapping of a new user namespace. Parent (launcher) side: runs after clone, before the
// child is told to go.
//   single id (default): the caller's uid and gid become 0 in the box; setgroups is denied
//     first, as the kernel requires of an unprivileged writer of gid_map.
//   --uid-range: 0 -> the caller, 1..N -> the caller's subordinate range from /etc/subuid and
//     /etc/subgid, written by the setuid helpers newuidmap/newgidmap.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "runtime/launch_plan.h"

#include "runtime/sys/error.h"

namespace kern {

struct SubidRange {
  uint64_t start = 0;
  uint64_t count = 0;
};

// Parses /etc/subuid-style text for `user` (by name or by uid). Pure.
Result<SubidRange> find_subid_range(const std::string& text, const std::string& user, uid_t uid,
                                    const std::string& file_name);

Status write_id_maps(pid_t child, uid_t uid, gid_t gid, bool uid_range);

// The OCI mode's maps, as config.json gives them. Root writes them itself; another user writes
// a single line mapping its own id (setgroups denied first), and needs newuidmap/newgidmap for
// anything else.
Status write_explicit_id_maps(pid_t child, const std::vector<IdMapLine>& uid_map,
                              const std::vector<IdMapLine>& gid_map);

// "0 1000 1" or "0 1000 1 1 100000 65536": the maps as written, for --plan and the report.
std::string describe_id_map(uid_t outer, bool uid_range);

}  // namespace kern
