// linux.seccomp of config.json -> a BPF program, compiled with libseccomp in the process that
// runs `kern oci create` (before clone: the child only loads it, as for kern's own programs).
//
// libseccomp is opened with dlopen on first use ("libseccomp.so.2", Debian package libseccomp2),
// so `kern box`, which loads precompiled programs, never pays for it.
//
// Rules follow the specification and what engines' profiles rely on: a system call name this
// libseccomp does not know is skipped (profiles list calls of newer kernels and other
// architectures); a rule whose action is the default action is skipped (it changes nothing, and
// libseccomp refuses it); args with distinct indexes are ANDed in one rule, args that repeat an
// index make one rule each (ORed).
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/sys/error.h"

namespace kern::bundle {

// SCMP_ACT_* name (+ errnoRet) -> libseccomp's action value. Pure. `path` names the member for
// the error ("linux.seccomp.syscalls[3]"). errnoRet on an action that takes none is refused.
Result<uint32_t> seccomp_action_value(const std::string& action, const std::optional<uint32_t>& errno_ret,
                                      const std::string& path);

// The compiled program, ready for seccomp(SECCOMP_SET_MODE_FILTER).
struct CompiledSeccomp {
  std::vector<struct sock_filter> program;
  bool log = false;  // SECCOMP_FILTER_FLAG_LOG was asked for
  bool spec_allow = false;  // SECCOMP_FILTER_FLAG_SPEC_ALLOW
  bool notify = false;      // SCMP_ACT_NOTIFY rules: loaded with a listener for listenerPath's agent
};

Result<CompiledSeccomp> compile_seccomp(const Seccomp& s);

// Which libseccomp compile_seccomp uses: its file's path, device:inode, size and modification
// time (opens it as compile_seccomp does). A compiled program is only reused by the same library.
Result<std::string> seccomp_library_identity();

}  // namespace kern::bundle
