// Placeholder for the systemd user manager step: not available yet, so the caller falls back to
// running uncapped under its policy.
#include "runtime/cgroup_systemd.h"

namespace kern {

Result<Subtree> systemd_subtree(const CgroupHost&) {
  return fail(ErrorKind::host_unsupported, 0, "");
}

}  // namespace kern
