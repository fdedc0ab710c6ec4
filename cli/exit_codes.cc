// The exit-code table; see exit_codes.h.
#include "cli/exit_codes.h"

#include <cerrno>

namespace kern::cli {

int exit_code_for(const Error& e, ExitTable table) {
  if (table == ExitTable::box) {
    if (e.kind() == ErrorKind::workload) {
      // execve's answer decides, as in docker run: not there -> 127, there but refused -> 126.
      if (e.sys_errno() == ENOENT || e.sys_errno() == ENOTDIR) return kExitNotFound;
      return kExitCannotExecute;
    }
    return kExitBoxFailed;
  }
  return e.kind() == ErrorKind::usage ? kExitUsage : kExitVerbFailed;
}

}  // namespace kern::cli
