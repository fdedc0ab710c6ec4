// Capabilities of the box's workload. The pure part (names, the default and always-dropped sets,
// --cap-drop/--cap-add resolution, listing) runs in the parent while the BoxSpec is built;
// read_last_cap runs in the parent before clone; apply_identity_and_caps_raw runs in the box's
// workload process after the mounts and before seccomp and exec.
//
// A set of capabilities is a uint64_t with bit N for capability N (CAP_CHOWN = 0, ...).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern {

// Capabilities kern knows by name: 0 .. kCapNamedLast (CAP_CHECKPOINT_RESTORE).
inline constexpr int kCapNamedLast = 40;

// "CAP_CHOWN" for 0, ...; empty for a number kern has no name for.
std::string_view cap_name(int cap);

// One --cap-drop/--cap-add word: a name with or without "CAP_", any case, or "ALL" (every
// capability kern knows). Returns the set it stands for; an unknown name is a usage error that
// names it.
Result<uint64_t> parse_cap(std::string_view word);

// Every capability kern knows by name.
uint64_t all_caps();

// Docker's default set: CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP
// SETPCAP NET_BIND_SERVICE SYS_CHROOT KILL AUDIT_WRITE.
uint64_t default_caps();

// Never kept, whatever the flags say (see caps.cc for why each one): SYS_ADMIN SYS_MODULE
// SYS_RAWIO SYS_PTRACE SYS_BOOT SYS_TIME MAC_ADMIN MAC_OVERRIDE BPF PERFMON SYSLOG NET_ADMIN.
uint64_t always_dropped_caps();

// The set the workload keeps, with Docker's rules: --cap-add ALL keeps everything except the
// named drops; else --cap-drop ALL keeps only the adds; else the default set minus the drops,
// plus the adds (an add wins over a drop of the same name). The always-dropped set is then
// removed; naming one of them in `add` is a usage error saying it is always dropped.
Result<uint64_t> resolve_caps(const std::vector<std::string>& drop, const std::vector<std::string>& add);

// "CAP_CHOWN,CAP_KILL" in numeric order, or "none" for the empty set (for --show-config,
// --plan and the report).
std::string cap_list(uint64_t caps);

// Parent, before clone: the highest capability number the running kernel knows, from
// /proc/sys/kernel/cap_last_cap (the child may no longer see the host's /proc). Falls back to
// the number the build headers know when the file cannot be read.
int read_last_cap() noexcept;

// Child, async-signal-safe, no allocation. Returns 0 or the errno of the failing step.
// In order:
//  1. clears the securebits that are not locked (so uid 0 gets its capabilities across exec and
//     an id switch drops them, the plain Linux rules);
//  2. drops from the bounding set every capability 0..last_cap not in `keep` (EINVAL for a
//     number the kernel does not know is ignored);
//  3. clears the ambient set;
//  4. drops the supplementary groups (EPERM is tolerated: a user namespace whose setgroups is
//     "deny" cannot, and then holds no mapped groups anyway);
//  5. when switch_ids, sets the real/effective/saved gid, then uid, keeping the parent-death
//     signal (which the kernel clears on an id change). The caller still has to check getppid()
//     afterwards for a parent that died meanwhile;
//  6. sets the effective, permitted and inheritable sets: `keep` when the (new) uid is 0, empty
//     otherwise, as Docker does for a non-root user.
// The always-dropped set is removed from `keep` here too.
int apply_identity_and_caps_raw(uid_t uid, gid_t gid, bool switch_ids, uint64_t keep,
                                int last_cap) noexcept;

// The OCI mode's variant (config.json is the policy): every set exactly as given, no
// always-dropped set. Child, async-signal-safe, no allocation; 0 or the errno. In order: the
// unlocked securebits cleared, the bounding set reduced to `bounding`, the supplementary groups
// set (EPERM tolerated only when `ngroups` is 0), capabilities kept across the id switch
// (PR_SET_KEEPCAPS), gid then uid set, effective/permitted/inheritable set, each ambient one
// raised.
int apply_oci_identity_raw(uid_t uid, gid_t gid, const gid_t* groups, size_t ngroups, uint64_t bounding,
                           uint64_t effective, uint64_t permitted, uint64_t inheritable, uint64_t ambient,
                           int last_cap) noexcept;

}  // namespace kern
