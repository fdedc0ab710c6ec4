// Writing to procfs without being redirected. A file under /proc that kern writes in a box's or
// a container's mount namespace (a sysctl, oom_score_adj, the AppArmor exec label) may have
// been covered: by a mount the configuration put over /proc, by a symlinked /proc in the image,
// or by a container sharing a mount with this one that binds another file (another procfs file
// such as /proc/sys/kernel/core_pattern, or a plain file) over the target. The write would then
// go elsewhere or nowhere (runc's CVE-2019-16884, CVE-2023-27561/28642 and CVE-2025-52881).
// Child-safe: no allocation, no exception.
#pragma once

namespace kern::sys {

// An fd (`flags` | O_CLOEXEC) of `rel` ("sys/kernel/domainname", "self/oom_score_adj",
// "thread-self/attr/apparmor/exec") under /proc, or -errno. /proc must be the root directory of
// a procfs mount (its statfs magic and inode), and the walk below it crosses no mount point and
// follows no magic link, so a target covered by any mount fails with EXDEV instead of being
// written through; a /proc that is not procfs fails with EXDEV too.
int open_procfs_file(const char* rel, int flags) noexcept;

}  // namespace kern::sys
