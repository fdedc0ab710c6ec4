// PLACEHOLDER until issue 4's implementation lands: no per-box cgroup is created yet, and the
// box runs uncapped with the contract's warning. Nothing here claims enforcement.
#include "runtime/cgroup.h"

#include "runtime/sys/log.h"

namespace kern {

Result<std::optional<BoxCgroup>> BoxCgroup::create(const std::string&, const Limits&,
                                                   CgroupPolicy policy) {
  if (policy == CgroupPolicy::require)
    return fail(ErrorKind::host_unsupported, 0,
                "--require-limits: no per-box cgroup could be created on this host");
  if (policy == CgroupPolicy::best_effort)
    log::warning("no delegated cgroup v2 subtree: the box runs without memory, pids or cpu caps");
  return std::optional<BoxCgroup>();
}

BoxCgroup::~BoxCgroup() = default;
Enforcement BoxCgroup::read_back(const Limits&) const { return {}; }
MemoryEvents BoxCgroup::events() const { return {}; }
Status BoxCgroup::remove() { return {}; }

}  // namespace kern
