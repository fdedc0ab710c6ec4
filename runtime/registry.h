// The box registry: every live box, foreground ones too, has a directory under the runtime dir
// (<runtime>/boxes/NAME) holding state.json; it is also the box's scratch mount point. Parent side, and the
// ps/stop verbs. Creating the directory is the claim on the name (mkdir is atomic); a directory
// whose launcher is dead is stale and reaped by the next claim or listing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

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

  const std::string& dir() const { return dir_; }
  // The box's scratch tmpfs (overlay upper, work dir, new root) is mounted over the registry
  // directory itself, inside the box's mount namespace only: one directory fewer to make and
  // remove per box, and nothing of the box is ever visible on the host.
  std::string scratch_dir() const { return dir_; }
  Status write(const BoxRecord& record);
  // Removes the directory; called at teardown (the destructor does it too).
  void release();

 private:
  explicit BoxRegistration(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// Every registered box; stale entries are reaped (removed) when `reap` is set.
std::vector<BoxRecord> list_boxes(const std::string& runtime_dir, bool reap);
Result<BoxRecord> read_box_record(const std::string& dir);
std::string record_to_json(const BoxRecord& r);

}  // namespace kern
