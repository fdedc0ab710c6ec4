// Entering an AppArmor profile at the workload's execve (kern box --apparmor, kern exec into
// such a box, and process.apparmorProfile in the OCI mode). Fail closed: a profile that is not
// loaded, or AppArmor not enabled, refuses the box before anything is created; a request the
// kernel refuses in the workload process is a setup failure (exit 125), never a box without it.
// The check runs in the launcher; enter_profile_on_exec_raw in the box's workload process.
#pragma once

#include <string>

#include "runtime/sys/error.h"

namespace kern {

// Whether AppArmor is enabled and `profile` is loaded, read under `root` ("/" on a real host):
// sys/module/apparmor/parameters/enabled and sys/kernel/security/apparmor/profiles. An Error of
// kind host_unsupported (not enabled, policy unreadable) or config (not loaded) otherwise, whose
// message starts with `asked_as` (how the caller asked: "--apparmor NAME").
Status check_apparmor_profile(const std::string& root, const std::string& profile, const std::string& asked_as);

// What the workload writes to its attr/exec file: "exec PROFILE".
std::string apparmor_exec_request(const std::string& profile);

// Asks the kernel to move this thread into the request's profile at its next execve: writes
// `request` (apparmor_exec_request) to /proc/thread-self/attr/apparmor/exec, or to the older
// /proc/thread-self/attr/exec where the per-LSM directory does not exist. Returns 0 or the
// errno, with the file in `*path`. No allocation: runs in the vfork-shared workload process.
int enter_profile_on_exec_raw(const std::string& request, const char** path) noexcept;

}  // namespace kern
