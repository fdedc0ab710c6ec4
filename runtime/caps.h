// Capabilities of the box's workload. The pure part (names, the default and always-dropped sets,
// --cap-drop/--cap-add resolution, listing) runs in the parent while the BoxSpec is built;
// read_last_cap runs in the parent before clone; apply_credentials_raw runs in the box's
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

// The names of the capabilities in `caps`, in numeric order (an unnamed one as "CAP_N").
std::vector<std::string> cap_names(uint64_t caps);
// The same joined: "CAP_CHOWN,CAP_KILL", or "none" for the empty set (for --show-config, --plan
// and the report).
std::string cap_list(uint64_t caps);

// Parent, before clone: the highest capability number the running kernel knows, from
// /proc/sys/kernel/cap_last_cap (the child may no longer see the host's /proc). Falls back to
// the number the build headers know when the file cannot be read.
int read_last_cap() noexcept;

// Child, async-signal-safe. Sets the real/effective/saved gid, then uid, and puts back the
// parent-death signal the kernel clears on an id change, so the process still dies with its
// parent; ESRCH when that parent died during the switch. apply_credentials_raw uses it.
int switch_ids_raw(uid_t uid, gid_t gid) noexcept;

// The five capability sets of a process.
struct CapSets {
  uint64_t bounding = 0, effective = 0, permitted = 0, inheritable = 0, ambient = 0;
};

// Who the workload is, as each translator decides it (kern box: box_credentials; the OCI
// mode: config.json's process.user and process.capabilities, oci_plan.h); one step applies it.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  bool switch_ids = false;    // set the ids; false keeps those the process has (kern box, no -u)
  std::vector<gid_t> groups;  // the supplementary groups; empty: none
  CapSets caps;
};

// Pure: kern box's rule. The bounding set is `keep` less the always-dropped set; effective and
// permitted are the same set for uid 0 (or when the ids are kept: the box's root) and empty for
// any other uid, as Docker does for a non-root user; inheritable and ambient are empty (an
// inheritable set would survive a later switch to another uid and hand the capabilities to any
// program with inheritable file capabilities: runc's CVE-2022-29162, crun's CVE-2022-27650);
// no supplementary groups.
Credentials box_credentials(uid_t uid, gid_t gid, bool switch_ids, uint64_t keep);

// Child, async-signal-safe, no allocation. Returns 0 or the errno of the failing step. In order:
//  1. clears the securebits that are not locked (so uid 0 gets its capabilities across exec and
//     an id switch drops them, the plain Linux rules);
//  2. reduces the bounding set to caps.bounding (EINVAL for a number the kernel does not know
//     is ignored);
//  3. sets the supplementary groups (EPERM tolerated when there are none: a user namespace
//     whose setgroups is "deny" cannot drop them, and holds no mapped groups anyway);
//  4. when switch_ids, switch_ids_raw with the capabilities kept across it (PR_SET_KEEPCAPS),
//     which puts back the parent-death signal;
//  5. sets the effective, permitted and inheritable sets;
//  6. clears the ambient set and raises each ambient capability (the OCI plan keeps only those
//     the kernel allows: oci_plan.h).
int apply_credentials_raw(const Credentials& c, int last_cap) noexcept;

}  // namespace kern
