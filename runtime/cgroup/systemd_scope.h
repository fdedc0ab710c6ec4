// Step 3 of finding a cgroup subtree (subtree.h): a delegated scope from the systemd user
// manager, for a kern that runs in a cgroup it may not write (a login session's scope).
// Parent (launcher) side.
#pragma once

#include <vector>

#include "runtime/cgroup/subtree.h"
#include "runtime/sys/error.h"

namespace kern {

// A Subtree inside a delegated scope with kern's own process moved into it (see
// systemd_scope.cc). An Error with an empty message means "no systemd user manager here"
// (nothing worth saying in the warning). `extra` as for prepare_subtree().
Result<Subtree> systemd_subtree(const CgroupHost& host, const std::vector<std::string>& extra = {});

}  // namespace kern
