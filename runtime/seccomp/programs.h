// The three BPF programs a box can load, compiled at build time by kern-seccomp-gen from the policy
// in runtime/seccomp/rules.cc (the definitions are generated into the build directory). Read by
// runtime/seccomp_filter.cc; use seccomp_program() from there rather than these directly.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>

#include <cstdint>

namespace kern::seccomp_programs {

// The AUDIT_ARCH_* of the architecture this is compiled for. The generated programs assert that
// they were made for it (kern-seccomp-gen runs on the build machine, or under an emulator in a
// cross build), so a mismatch fails the build instead of killing every box.
#if defined(__x86_64__) && !defined(__ILP32__)
inline constexpr uint32_t kTargetAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__) && !defined(__AARCH64EB__)
inline constexpr uint32_t kTargetAuditArch = AUDIT_ARCH_AARCH64;
#elif defined(__arm__) && !defined(__ARMEB__)
inline constexpr uint32_t kTargetAuditArch = AUDIT_ARCH_ARM;
#elif defined(__riscv) && __riscv_xlen == 64
inline constexpr uint32_t kTargetAuditArch = AUDIT_ARCH_RISCV64;
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
inline constexpr uint32_t kTargetAuditArch = AUDIT_ARCH_PPC64LE;
#elif defined(__s390x__)
inline constexpr uint32_t kTargetAuditArch = AUDIT_ARCH_S390X;
#else
#error "no AUDIT_ARCH_* known for this target: add it to runtime/seccomp/programs.h"
#endif

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
