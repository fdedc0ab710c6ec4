// The box registry: every live box, foreground ones too, has a record file under the runtime
// dir (<runtime>/boxes/NAME, JSON). Parent side, and the ps/stop verbs. Creating the file with
// O_EXCL is the claim on the name (the record is written into it once the box is started); a record whose launcher is dead is stale and reaped by the
// next claim or listing. The boxes' scratch tmpfs is mounted, inside each box's own mount
// namespace, over one shared empty directory (<runtime>/scratch): no directory is made or removed
// per box (on a disk mounted with discard, removing one costs half a millisecond).
#pragma once

#include <sys/types.h>

#include <cstdint>
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
  std::string command;
  int64_t started_unix = 0;
  std::string kind = "box";     // "box" or "kernel"
};

bool launcher_alive(const BoxRecord& r);
// "box-<pid>"-style names are checked by cli; this is the contract's rule: 1-64 of
// [A-Za-z0-9_.-], no leading '-' or '.'.
bool valid_box_name(const std::string& name);

class BoxRegistration {
 public:
  // Claims NAME (refusing a live box of that name; reaping a stale one).
  static Result<BoxRegistration> claim(const std::string& runtime_dir, const std::string& name);
  BoxRegistration(BoxRegistration&& o) noexcept;
  BoxRegistration& operator=(BoxRegistration&&) = delete;
  ~BoxRegistration();

  const std::string& path() const { return path_; }
  // Where the box's scratch tmpfs (overlay upper, work dir, new root) is mounted, inside the
  // box's mount namespace only: on the host it stays an empty directory shared by every box.
  const std::string& scratch_dir() const { return scratch_; }
  Status write(const BoxRecord& record);
  // Removes the record; called at teardown (the destructor does it too).
  void release();

 private:
  BoxRegistration(std::string path, std::string scratch, UniqueFd fd)
      : path_(std::move(path)), scratch_(std::move(scratch)), fd_(std::move(fd)) {}
  std::string path_;
  std::string scratch_;
  UniqueFd fd_;  // the claimed record file, written in place
};

// Every registered box; stale entries are reaped (removed) when `reap` is set.
std::vector<BoxRecord> list_boxes(const std::string& runtime_dir, bool reap);
// The record file of a box (<runtime>/boxes/NAME).
Result<BoxRecord> read_box_record(const std::string& path);
std::string record_to_json(const BoxRecord& r);

}  // namespace kern
