// The box's seccomp filter: choosing the program (parent, before clone) and loading it (child,
// last step before exec). The programs themselves are compiled at build time from
// runtime/seccomp/rules.cc (kern-box(1)); nothing here compiles a filter.
#pragma once

#include <linux/filter.h>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern {

struct SeccompProgram {
  const struct sock_filter* filter;
  unsigned short len;
};

// The precompiled program for `mode`. Static data: valid for the life of the process, so the
// parent can pick it before clone and the child can load it without allocating.
SeccompProgram seccomp_program(SeccompMode mode);

// "allowlist" / "denylist", as KERN_SECCOMP spells them (for --show-config, --plan, the report).
const char* seccomp_mode_name(SeccompMode mode);

// KERN_SECCOMP (kern-box(1)): null or empty -> allowlist; "allowlist" or "denylist";
// anything else is a usage error naming the allowed values (never a silent fallback).
Result<SeccompMode> parse_seccomp_env(const char* value);

// Child side, async-signal-safe, no allocation. Sets no_new_privs (which unprivileged seccomp
// requires, and which keeps setuid binaries from raising privileges) and loads `p` into the
// calling thread. Returns 0 or the errno of the failing call. Call it last before exec: from
// then on the calling code is itself under the filter.
int install_seccomp_raw(const SeccompProgram& p) noexcept;
// The OCI mode's variant: no_new_privs only when `no_new_privs` (config.json's
// process.noNewPrivileges). Without it the kernel requires CAP_SYS_ADMIN, so the caller loads
// the filter before it drops capabilities.
int install_seccomp_raw(const SeccompProgram& p, bool no_new_privs) noexcept;

}  // namespace kern
