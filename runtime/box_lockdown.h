// The lockdown of a running box's workload, kept for `kern exec`: which namespaces the box has
// of its own, the capability set, the seccomp mode, the environment, the working directory and
// the ids. A JSON sidecar (<runtime>/lockdown/NAME, mode 0600) written by the launcher right
// after the box started and removed when it ends; `kern exec` reads it to give a new process
// exactly what the workload got. It carries box init's pid and start time, so that a record
// outliving its box (a launcher killed with SIGKILL) never makes exec join a recycled pid.
// Launcher side and the exec verb; the JSON round trip is pure.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/launch_plan.h"
#include "runtime/sys/error.h"

namespace kern {

struct BoxLockdown {
  pid_t init_pid = 0;
  uint64_t init_start = 0;       // /proc/PID/stat start time of box init
  unsigned long long namespaces = 0;  // the CLONE_NEW* flags the box was cloned with
  uint64_t caps_keep = 0;
  SeccompMode seccomp = SeccompMode::allowlist;
  std::vector<std::string> env;  // the workload's complete environment
  std::string cwd = "/";
  uid_t uid = 0;
  gid_t gid = 0;
  bool user_set = false;
  std::string apparmor_exec;  // the box's AppArmor request ("exec PROFILE"), "" for none
  std::vector<RlimitSetting> rlimits;  // --ulimit: set on every process kern exec starts too
};

// The lockdown a plan gives its workload. Fails when the plan's seccomp program is none of the
// programs kern knows by mode (exec could not load the same one).
Result<BoxLockdown> lockdown_from_plan(const LaunchPlan& plan, pid_t init_pid, uint64_t init_start);

std::string lockdown_to_json(const BoxLockdown& l);
// Refuses anything that is not a complete record (a missing or mistyped field, an unknown
// seccomp mode, namespace bits that are not CLONE_NEW* flags).
Result<BoxLockdown> lockdown_from_json(const std::string& text);

// <runtime>/lockdown/NAME
std::string lockdown_path(const std::string& runtime_dir, const std::string& name);

// Reads the record of box NAME; an error of kind config when there is none.
Result<BoxLockdown> read_lockdown(const std::string& runtime_dir, const std::string& name);

// Removes the records in `dir` (<runtime>/lockdown) whose box init is gone: those of launchers
// killed with SIGKILL. Run by kern ps and kern gc (never per box: a box's end reads no other
// box's record).
void reap_stale_lockdowns(const std::string& dir);

// The record of one box while it runs: written by publish(), removed by the destructor.
class LockdownRecord {
 public:
  // Writes the record (replacing a stale one of the same name) for the box `plan` describes,
  // whose init is `init_pid`.
  static Result<LockdownRecord> publish(const std::string& runtime_dir, const LaunchPlan& plan, pid_t init_pid);
  LockdownRecord(LockdownRecord&& o) noexcept : path_(std::move(o.path_)), ino_(o.ino_) { o.path_.clear(); }
  LockdownRecord& operator=(LockdownRecord&&) = delete;
  // Removes the record, unless the name's record is already another box's (the name may be
  // claimed again once the registry released it), then the stale records of other boxes.
  ~LockdownRecord();
  // kern rename: the record moves to NAME's path (replacing nothing: the name was just claimed).
  Status rename_to(const std::string& runtime_dir, const std::string& name);

 private:
  LockdownRecord(std::string path, uint64_t ino) : path_(std::move(path)), ino_(ino) {}
  std::string path_;
  uint64_t ino_ = 0;
};

}  // namespace kern
