// KERN_SECCOMP=allowlist-audit (kern-box(1), SECURITY.md): a validation mode. The box loads the
// allowlist whose default action is SECCOMP_RET_USER_NOTIF instead of ENOSYS; kern holds the
// filter's listener and, for each call on no list, records it (name, count, first caller) and
// lets it run (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The killed, ENOSYS and errno rules still apply.
// The box is NOT locked down while this mode is on. Launcher side: one thread per box owns the
// listener; the records go to the report fd and a summary to stderr when the box has exited.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

struct AuditedCall {
  long nr = -1;
  std::string name;           // "acct"; "syscall_NNN" when the table has no name
  uint64_t count = 0;
  pid_t first_pid = 0;        // as kern sees it (the launcher's pid namespace)
  std::string first_command;  // /proc/PID/comm of that process, "" when it was already gone
};

// The tally, pure: what was called, how often, by whom first. Ordered by first appearance.
class AuditTally {
 public:
  // `command_of` is asked only the first time a call is seen.
  void record(long nr, pid_t pid, const std::function<std::string(pid_t)>& command_of);
  std::vector<AuditedCall> calls() const;

 private:
  std::map<long, size_t> index_;
  std::vector<AuditedCall> calls_;
};

// The report fd's record of one audited call.
std::string audit_record(const std::string& box_name, const AuditedCall& c);
// The stderr summary (without the "kern: warning: " prefix).
std::string audit_summary(const std::vector<AuditedCall>& calls);

class SeccompAuditor {
 public:
  // Starts the thread that answers `listener`.
  static Result<std::unique_ptr<SeccompAuditor>> start(UniqueFd listener);
  ~SeccompAuditor();
  // After the box has been reaped: answers what is still queued, stops the thread, returns
  // the tally.
  std::vector<AuditedCall> finish();

 private:
  SeccompAuditor() = default;
  void run();

  UniqueFd listener_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  AuditTally tally_;
};

}  // namespace kern
