// The per-box cgroup v2 scope (kern-box(1), issue 4). Parent (launcher) side only.
//
// Interface used by the launcher:
//   1. BoxCgroup::create() before clone: finds a delegated subtree (subtree.h), creates the
//      box's cgroup, enables controllers, writes the limits (the built-in defaults of
//      enforcement.h for every Limits field left empty). Returns an empty optional when the
//      policy allows running without one: under best_effort it has printed the one
//      `kern: warning:` line, under allow_uncapped one naming the caps asked for (nothing when
//      only the defaults were). Under require it refuses (a
//      host_unsupported Error, exit 125) unless memory and pids read back as in force, and then
//      leaves nothing behind.
//   2. dir_fd() is passed to clone3(CLONE_INTO_CGROUP) so the box starts inside it.
//   3. read_back() after the workload's exec: what the kernel says is in force. Without a
//      cgroup, uncapped_enforcement() (enforcement.h) gives the verdicts.
//   4. reap_others() once the workload runs: the leftovers of killed launchers go then.
//   5. events() and remove() at teardown.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/cgroup/subtree.h"
#include "runtime/cgroup/enforcement.h"
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

// The caps `limits` asks for (fields set by a flag or a profile; the built-in defaults are not
// in it), as "memory.max 64 MiB, pids.max 10"; empty when none.
std::string requested_caps(const Limits& limits);
// The warning for a box (kind "box") or command ("run") that gets no cgroup, without the
// "kern: warning: " prefix; empty when the policy wants silence: allow_uncapped is silent only
// when no cap was asked for, none is silent (the launcher names KERN_NO_SCOPE's lost caps).
// One short line, printed on every such box: why there is no cgroup is `kern doctor`'s to
// explain, and the line says how to silence it for good where that is allowed.
std::string uncapped_warning(CgroupPolicy policy, const Limits& limits, const std::string& kind);

class BoxCgroup {
 public:
  // Where create() found or made the parent; nullopt when uncapped under the policy.
  // `runtime_dir`: where the found subtree is remembered ("" = look it up).
  static Result<std::optional<BoxCgroup>> create(const std::string& box_name, const Limits& limits,
                                                 CgroupPolicy policy, const std::string& runtime_dir = {},
                                                 const DefaultCapsWarning& default_caps_warning = {});
  // The same for any host (tests pass a fake tree) and kind ("box", or "run" for kern run).
  static Result<std::optional<BoxCgroup>> create_in(CgroupHost host, const std::string& kind,
                                                    const std::string& name, const Limits& limits,
                                                    CgroupPolicy policy,
                                                    const DefaultCapsWarning& default_caps_warning = {});
  // Takes over an existing cgroup directory (relative to host.mount) without writing anything:
  // for tests of read_back() and events() against fake trees.
  static Result<BoxCgroup> adopt(const CgroupHost& host, const std::string& rel,
                                 std::vector<std::string> controllers);

  BoxCgroup(BoxCgroup&&) = default;
  BoxCgroup& operator=(BoxCgroup&&) = default;
  ~BoxCgroup();

  int dir_fd() const { return dir_.get(); }
  const std::string& path() const { return path_; }  // absolute path under the cgroup2 mount
  const std::string& rel() const { return rel_; }    // relative to the mount
  Enforcement read_back(const Limits& requested) const;
  MemoryEvents events() const;
  // Removes the box cgroups of dead launchers next to this one (reap_leftovers). Called once the
  // workload runs, so that a start never waits for another box's clean-up.
  void reap_others() const;
  // Kills whatever is left (cgroup.kill) and removes the directory.
  Status remove();
  // Moves `pid` into the box's cgroup (kern run's fallback when clone3 cannot place the child).
  Status attach(pid_t pid) const;

 private:
  BoxCgroup(UniqueFd dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  UniqueFd dir_;
  std::string path_;
  std::string rel_;
  std::vector<std::string> controllers_;
  CgroupHost host_;  // the mount, the launcher, its CPUs; the base is rel_'s parent
  bool removed_ = false;
};

}  // namespace kern
