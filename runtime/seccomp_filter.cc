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
    case SeccompMode::allowlist_audit:
      return {seccomp_programs::allowlist_audit, seccomp_programs::allowlist_audit_len};
  }
  return {seccomp_programs::allowlist, seccomp_programs::allowlist_len};
}

const char* seccomp_mode_name(SeccompMode mode) {
  switch (mode) {
    case SeccompMode::allowlist: return "allowlist";
    case SeccompMode::denylist: return "denylist";
    case SeccompMode::allowlist_audit: return "allowlist-audit";
  }
  return "allowlist";
}

const char* syscall_name(long nr) {
  if (nr < 0 || static_cast<unsigned long>(nr) >= seccomp_programs::syscall_names_len) return nullptr;
  return seccomp_programs::syscall_names[nr];
}

Result<SeccompMode> parse_seccomp_env(const char* value) {
  if (value == nullptr || value[0] == '\0') return SeccompMode::allowlist;
  if (std::strcmp(value, "allowlist") == 0) return SeccompMode::allowlist;
  if (std::strcmp(value, "denylist") == 0) return SeccompMode::denylist;
  if (std::strcmp(value, "allowlist-audit") == 0) return SeccompMode::allowlist_audit;
  return fail(ErrorKind::usage, 0,
              std::string("KERN_SECCOMP=\"") + value +
                  "\": unknown seccomp mode; allowed values: allowlist, denylist, allowlist-audit");
}

int install_seccomp_raw(const SeccompProgram& p) noexcept { return install_seccomp_raw(p, true); }

int install_seccomp_raw(const SeccompProgram& p, bool no_new_privs) noexcept {
  return install_seccomp_listener_raw(p, nullptr, no_new_privs);
}

int install_seccomp_listener_raw(const SeccompProgram& p, int* listener, bool no_new_privs) noexcept {
  if (p.filter == nullptr || p.len == 0) return EINVAL;
  if (no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  struct sock_fprog prog;
  prog.len = p.len;
  // The kernel copies the program; it never writes through this pointer.
  prog.filter = const_cast<struct sock_filter*>(p.filter);
  // No SECCOMP_FILTER_FLAG_TSYNC: the box's processes are single-threaded when they load it.
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &prog);
  if (r < 0) return errno;
  if (listener) *listener = static_cast<int>(r);  // close-on-exec, as the kernel makes it
  return 0;
}

}  // namespace kern
