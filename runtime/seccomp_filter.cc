// The box's seccomp filter. seccomp_program, seccomp_mode_name and parse_seccomp_env run in the
// parent before clone; install_seccomp_raw runs in the box's workload process just before exec.
#include "runtime/seccomp_filter.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/seccomp/programs.h"

namespace kern {

SeccompProgram seccomp_program(SeccompMode mode) {
  switch (mode) {
    case SeccompMode::allowlist:
      return {seccomp_programs::allowlist, seccomp_programs::allowlist_len};
    case SeccompMode::denylist:
      return {seccomp_programs::denylist, seccomp_programs::denylist_len};
  }
  return {seccomp_programs::allowlist, seccomp_programs::allowlist_len};
}

const char* seccomp_mode_name(SeccompMode mode) {
  return mode == SeccompMode::denylist ? "denylist" : "allowlist";
}

Result<SeccompMode> parse_seccomp_env(const char* value) {
  if (value == nullptr || value[0] == '\0') return SeccompMode::allowlist;
  if (std::strcmp(value, "allowlist") == 0) return SeccompMode::allowlist;
  if (std::strcmp(value, "denylist") == 0) return SeccompMode::denylist;
  return fail(ErrorKind::usage, 0,
              std::string("KERN_SECCOMP=\"") + value +
                  "\": unknown seccomp mode; allowed values: allowlist, denylist");
}

int install_seccomp_raw(const SeccompProgram& p) noexcept { return install_seccomp_raw(p, true); }

int install_seccomp_raw(const SeccompProgram& p, bool no_new_privs) noexcept {
  if (p.filter == nullptr || p.len == 0) return EINVAL;
  if (no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  struct sock_fprog prog;
  prog.len = p.len;
  // The kernel copies the program; it never writes through this pointer.
  prog.filter = const_cast<struct sock_filter*>(p.filter);
  // No SECCOMP_FILTER_FLAG_TSYNC: the box's processes are single-threaded when they load it.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
  return 0;
}

}  // namespace kern
