// The per-box cgroup v2 scope (CONTRACT section 6, issue 4). Parent (launcher) side only.
//
// Interface used by the launcher:
//   1. BoxCgroup::create() before clone: finds a delegated subtree, creates the box's cgroup,
//      enables controllers, writes the limits. Returns an empty optional when the policy allows
//      running without one (the caller prints nothing; create() already warned if it should).
//   2. dir_fd() is passed to clone3(CLONE_INTO_CGROUP) so the box starts inside it.
//   3. read_back() after the workload's exec: what the kernel says is in force.
//   4. events() and remove() at teardown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/box_spec.h"
#include "runtime/enforcement.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

struct MemoryEvents {
  uint64_t oom = 0;
  uint64_t oom_kill = 0;
  uint64_t oom_group_kill = 0;
  uint64_t max = 0;
  uint64_t pids_max_hits = 0;  // from pids.events "max"
  uint64_t memory_peak = 0;    // memory.peak, 0 when the kernel has none
  uint64_t cpu_usage_usec = 0; // cpu.stat usage_usec
  bool valid = false;          // false: nothing could be read
};

class BoxCgroup {
 public:
  // Where create() found or made the parent; nullopt when uncapped under the policy.
  static Result<std::optional<BoxCgroup>> create(const std::string& box_name, const Limits& limits,
                                                 CgroupPolicy policy);

  BoxCgroup(BoxCgroup&&) = default;
  BoxCgroup& operator=(BoxCgroup&&) = default;
  ~BoxCgroup();

  int dir_fd() const { return dir_.get(); }
  const std::string& path() const { return path_; }  // absolute path under /sys/fs/cgroup
  Enforcement read_back(const Limits& requested) const;
  MemoryEvents events() const;
  // Kills whatever is left (cgroup.kill) and removes the directory.
  Status remove();

 private:
  BoxCgroup(UniqueFd dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  UniqueFd dir_;
  std::string path_;
  bool removed_ = false;
};

}  // namespace kern
