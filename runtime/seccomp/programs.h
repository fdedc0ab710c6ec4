// The three BPF programs a box can load, compiled at build time by kern-seccomp-gen from the policy
// in runtime/seccomp/rules.cc (the definitions are generated into the build directory). Read by
// runtime/seccomp_filter.cc; use seccomp_program() from there rather than these directly.
#pragma once

#include <linux/filter.h>

namespace kern::seccomp_programs {

// Deny by default: unlisted calls answer ENOSYS.
extern const struct sock_filter allowlist[];
extern const unsigned short allowlist_len;
// Allow by default: only the killed, ENOSYS and errno rules apply.
extern const struct sock_filter denylist[];
extern const unsigned short denylist_len;
// The allowlist, but a call on no list goes to the user-space listener (SECCOMP_RET_USER_NOTIF)
// instead of ENOSYS: KERN_SECCOMP=allowlist-audit. Without a listener such a call fails with
// ENOSYS, as under the allowlist.
extern const struct sock_filter allowlist_audit[];
extern const unsigned short allowlist_audit_len;
// Native syscall names by number (nullptr where none), for the audit records.
extern const char* const syscall_names[];
extern const unsigned syscall_names_len;
// "MAJOR.MINOR.MICRO" of the libseccomp that compiled these programs (for `kern version`).
extern const char libseccomp_version[];

}  // namespace kern::seccomp_programs
