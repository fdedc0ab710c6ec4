// Where cgroup v2 is, where this process sits in it, and which subtree kern may create box
// cgroups in (kern-box(1)). Parent (launcher) side, before clone.
//
// The subtree is found in this order:
//   1. The own cgroup, when it is writable by us and we are its only process: kern moves itself
//      into a leaf (OWN/kern-launch: cgroup v2 lets only leaves hold processes once controllers
//      are enabled) and enables the controllers in OWN. This is the case under
//      `systemd-run --user --scope -p Delegate=yes kern ...`.
//   2. The closest ancestor whose directory and cgroup.procs we may write and whose children get
//      memory and pids (a delegated subtree such as systemd's user@UID.service, where kern runs
//      in one of its leaves). Moving a process between two cgroups needs write access to the
//      cgroup.procs of their common ancestor, which is exactly this check.
//   3. A delegated scope from the systemd user manager (systemd_scope.cc), made once and
//      recorded under the runtime dir.
// Box cgroups live in SUBTREE/kern/<kind>-<name>-<launcher pid>-<launcher start time>, so a
// leftover whose launcher is dead is recognised and reaped by the next start.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"

namespace kern {

struct CgroupHost {
  std::string mount;  // absolute mount point of cgroup2 ("/sys/fs/cgroup"); "" = none mounted
  std::string self;   // this process's cgroup relative to the mount: "/" or "/a/b"
  std::string proc_self;  // the path /proc/self/cgroup names ("" = no cgroup v2 line)
  uid_t euid = 0;
  pid_t pid = 0;
  uint64_t start_time = 0;  // /proc/self/stat starttime, part of box cgroup names
  unsigned cpus = 1;        // CPUs this process may run on (cpu.max clamp)
  std::string runtime_dir;  // where a systemd scope is recorded; "" = do not ask systemd
};

// Reads /proc/self/cgroup (and /proc/self/mountinfo unless cgroup2 is at /sys/fs/cgroup). A
// host without cgroup2 gives mount "".
Result<CgroupHost> probe_cgroup_host();
// The two halves of it: who this process is and what /proc/self/cgroup says, without looking
// for the mount (a remembered subtree brings its mount along: cached_subtree); then the mount.
Result<CgroupHost> probe_cgroup_self();
// Fills in mount and self unless mount is already set.
Status locate_cgroup_mount(CgroupHost& host);

// Pure parsers, exposed for tests.
// The mount point of the first cgroup2 mount, and the mount's root inside the hierarchy.
std::optional<std::string> cgroup2_mount(std::string_view mountinfo, std::string* root);
// The "0::PATH" line of /proc/PID/cgroup.
std::optional<std::string> unified_cgroup_path(std::string_view proc_cgroup);
// The controllers named in a cgroup.controllers / cgroup.subtree_control text (a leading '+'
// of the written form is dropped).
std::vector<std::string> controller_list(std::string_view text);
// Reads a small kernel file (a cgroup knob) with as few system calls as it
// takes: open, one read when the text fits, close. Returns 0 or the errno.
int read_knob_file(int dirfd, const std::string& path, std::string* out);

// Box cgroup directory names: "<kind>-<name>-<pid>-<start>".
std::string box_cgroup_name(std::string_view kind, std::string_view name, pid_t pid, uint64_t start);
// The launcher of a box cgroup name; false when the name is not one of ours.
bool parse_box_cgroup_name(std::string_view dir, pid_t* pid, uint64_t* start);

struct Subtree {
  std::string base;                      // relative to the mount: ".../kern", holds box cgroups
  std::vector<std::string> controllers;  // enabled for box cgroups (memory, pids and what else is)
  std::string how;                       // for messages: "own cgroup", "delegated ancestor"
};

struct SubtreeResult {
  std::optional<Subtree> subtree;
  std::string why_not;  // when there is none: one clause for the warning or the refusal
};

// Steps 1 and 2 above (step 3 is tried by the caller). May move this process into a leaf of its
// own cgroup and may create SUBTREE/kern; creates nothing when no subtree qualifies.
// `extra`: controllers beyond memory and pids this box needs (cpu, cpuset, io); each enabled
// controller costs every later box cgroup some set-up, so only what is asked for is enabled.
SubtreeResult prepare_subtree(const CgroupHost& host, const std::vector<std::string>& extra = {});

// Enables memory, pids and the `extra` controllers the parent offers in PARENT/kern, creating
// it; `parent` must already pass memory and pids down. Used for steps 1-3.
Result<Subtree> prepare_base(const CgroupHost& host, const std::string& parent, std::string how,
                             const std::vector<std::string>& extra = {});

// The subtree found by step 2 for this host's own cgroup, remembered under the runtime dir so
// that the next start skips the search (subtree_cache.cc). Stale entries are dropped by the caller
// when the box cgroup cannot be made in them. A hit fills in host.mount and host.self when they
// were not looked up yet.
std::optional<Subtree> cached_subtree(CgroupHost& host, const std::vector<std::string>& extra);
void remember_subtree(const CgroupHost& host, const Subtree& tree);
void forget_subtree(const CgroupHost& host);

// Where cgroup v2 is mounted and this process's cgroup in it, remembered under the runtime dir
// for the own cgroup /proc/self/cgroup names (subtree_cache.cc), so that a start on a host with no
// delegated subtree does not read /proc/self/mountinfo each time to find out again that there is
// none: the answer itself is never remembered, it is read anew from the own cgroup's
// cgroup.controllers, which must exist under the remembered mount for a hit. Fills in host.mount
// and host.self on a hit; a miss changes nothing.
bool remembered_mount(CgroupHost& host);
void remember_mount(const CgroupHost& host);

// Kills and removes box cgroups under `base` whose launcher is dead (`own`, the caller's new
// box cgroup, is skipped). Best effort, silent.
void reap_leftovers(const CgroupHost& host, const std::string& base, const std::string& own = {});

}  // namespace kern
