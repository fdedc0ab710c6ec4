// The box registry: every live box, foreground ones too, has a record file under the runtime
// dir (<runtime>/boxes/NAME, JSON). Parent side, and the ps/stop verbs.
//
// Who owns a name is decided by an open-file-description lock, never by what a file says: the
// launcher holds a write lock on byte 0 of its record ("the owner lock") from its claim until
// it exits, and the kernel drops that lock when the last descriptor of it closes, SIGKILL
// included. A record whose owner lock nobody holds is stale. Taking over a stale record and
// claiming the name are therefore one step (getting the owner lock on the file the path still
// names). Reaping a stale record (unlinking it) also takes the owner lock first; both sides take
// byte 1 ("the gate") around their attempt, so a claimer never mistakes a reaper's moment for a
// live box. `release` unlinks the record only while the path still names the file this
// registration created or took over.
//
// Detached boxes (`kern box -d`) keep their record after the workload exits: the supervisor
// writes it in the "exited" state, with the exit code, before it lets the owner lock go. An
// exited record is never stale: listing keeps it (kern ps -a), claim() refuses its name, and only
// remove_exited_box (kern rm) unlinks it. A detached record still "running" whose owner lock
// nobody holds is a supervisor that was SIGKILLed: reaped like any stale record, together with
// the box's log, socket and (empty) cgroup.
//
// The boxes' scratch tmpfs is mounted, inside each box's own mount namespace, over one shared
// empty directory (<runtime>/scratch): no directory is made or removed per box (on a disk
// mounted with discard, removing one costs half a millisecond).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

struct BoxRecord {
  std::string name;
  pid_t launcher_pid = 0;
  uint64_t launcher_start = 0;  // /proc/PID/stat starttime: guards against pid reuse
  pid_t init_pid = 0;           // host pid of the box's PID 1
  std::string cgroup;
  std::string image;
  std::string image_digest;  // the manifest digest of the image ("" for --rootfs)
  bool uid_range = false;    // --uid-range: its files belong to more than the user's own id
  std::string command;
  int64_t started_unix = 0;
  std::string kind = "box";     // "box" or "kernel"
  // Detached boxes only (foreground records never carry these).
  bool detached = false;
  std::string state = "running";  // "running" or "exited"
  int exit_code = 0;              // exited: the workload's code (128+N for signal N)
  int64_t exited_unix = 0;
  bool auto_remove = false;       // --rm: the record goes at exit instead of being kept
  std::string detail;             // a JSON object kept for `kern inspect`; opaque here
  // --restart: the policy's spelling ("" or "no": none) and the boxes started after the first.
  // state "restarting": between a box's exit (exit_code) and the next one's start.
  std::string restart_policy;
  unsigned restarts = 0;
  std::string health;  // health checks: the state's JSON object (health.h), "" without checks
  std::vector<std::pair<std::string, std::string>> labels;  // --label, in the order given
  int stop_signal = 15;  // --stop-signal: what kern stop sends first
  unsigned stop_timeout = 10;  // --stop-timeout: kern stop's grace in seconds
  // --net private's -p, as "HOSTIP:HOSTPORT->BOXPORT/PROTO" ("0.0.0.0:8080->80/tcp").
  std::vector<std::string> ports;
  // The named volumes the box mounts (-v NAME:DST): kern volume rm and prune leave them alone
  // while this record is listed.
  std::vector<std::string> volumes;
};

inline bool record_exited(const BoxRecord& r) { return r.detached && r.state == "exited"; }

bool launcher_alive(const BoxRecord& r);
// "box-<pid>"-style names are checked by cli; this is the contract's rule: 1-64 of
// [A-Za-z0-9_.-], no leading '-' or '.'.
bool valid_box_name(const std::string& name);

class BoxRegistration {
 public:
  // Claims NAME (refusing a live box of that name; taking over a stale record of it).
  static Result<BoxRegistration> claim(const std::string& runtime_dir, const std::string& name);
  BoxRegistration(BoxRegistration&& o) noexcept;
  BoxRegistration& operator=(BoxRegistration&&) = delete;
  ~BoxRegistration();

  const std::string& path() const { return path_; }
  // Where the box's scratch tmpfs (overlay upper, work dir, new root) is mounted, inside the
  // box's mount namespace only: on the host it stays an empty directory shared by every box.
  const std::string& scratch_dir() const { return scratch_; }
  Status write(const BoxRecord& record);
  // Removes the record if the path still names this registration's file, and drops the owner
  // lock; called at teardown (the destructor does it too).
  void release();
  // Closes this process's descriptor of the record without removing it: a process that forked
  // the record's owner (the `kern box -d` command, once its supervisor holds the same open file
  // description) lets go of its copy. The lock stays with the other descriptor.
  void abandon();
  // Writes `record` (state "exited") and lets the owner lock go, keeping the record: the name
  // stays reserved until remove_exited_box.
  Status keep_exited(const BoxRecord& record);
  // kern rename of a live box this process owns: claims `new_name` (refused as any claim is),
  // writes `record` there, then removes the old record. A listing between the two may see both
  // names for a moment, never neither.
  Status move_to(const std::string& runtime_dir, const std::string& new_name, const BoxRecord& record);

 private:
  BoxRegistration(std::string path, std::string scratch, UniqueFd fd)
      : path_(std::move(path)), scratch_(std::move(scratch)), fd_(std::move(fd)) {}
  std::string path_;
  std::string scratch_;
  UniqueFd fd_;  // the claimed record file, written in place; holds the owner lock
};

// kern rename of an exited detached box (its record kept, no process owns it): the record, its
// log and its kept upper move to `new_name`, which is claimed as any name is.
Status rename_exited_box(const std::string& runtime_dir, const std::string& name, const std::string& new_name);
// A detached box's files that are named after it (its log, its kept upper and, for a running
// box, its socket) moved to `to`'s names; a missing one is skipped.
Status rename_detached_files(const std::string& runtime_dir, const std::string& from, const std::string& to,
                             bool socket);

// Every live registered box; stale entries are reaped (removed) when `reap` is set.
std::vector<BoxRecord> list_boxes(const std::string& runtime_dir, bool reap);
// The same plus the exited detached boxes (kern ps -a), which are never reaped.
std::vector<BoxRecord> list_boxes_all(const std::string& runtime_dir, bool reap);
// The record list_boxes_all would list for box NAME, reading that one file only (a verb given
// many names reads each once, not every record per name).
std::optional<BoxRecord> find_box_record(const std::string& runtime_dir, const std::string& name, bool reap);

// Where a detached box keeps its log ring and its socket (<runtime>/detached, 0700).
std::string detached_dir(const std::string& runtime_dir);
std::string detached_log_path(const std::string& runtime_dir, const std::string& name);
// A --restart box's scratch dir on the host (its overlay upper, kept across its boxes until kern rm).
std::string detached_kept_dir(const std::string& runtime_dir, const std::string& name);
std::string detached_socket_path(const std::string& runtime_dir, const std::string& name);

// kern rm: removes the record of the exited detached box NAME with its log (or a stale record).
// Refuses a box that runs (its owner lock is held) with an error of kind usage.
Status remove_exited_box(const std::string& runtime_dir, const std::string& name);
// The record file of a box (<runtime>/boxes/NAME).
Result<BoxRecord> read_box_record(const std::string& path);
std::string record_to_json(const BoxRecord& r);

}  // namespace kern
