// The mount plan: the exact, ordered list of mount steps that builds a box's root, computed
// from a BoxSpec before clone (pure, unit-tested, printed by --plan) and walked by the child
// (runtime/box/mount_exec.cc) through the MountOps seam.
//
// Paths in a plan are either scratch-relative ("root", "upper") or box paths ("/proc", "/dev/null"):
// the executor resolves box paths beneath the new root without following symlinks out of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/config_root.h"

namespace kern {

enum class MountStepKind {
  make_private,      // "/" rprivate: nothing propagates back to the host
  scratch_tmpfs,     // a private tmpfs over the per-box scratch dir: upper, work, new root
  scratch_dirs,      // upper, work, new root in the box's own scratch dir on the host (kept)
  overlay_root,      // overlay: lowers (read-only) + upper on scratch -> "root"
  proc,              // procfs of the box's pid namespace
  mask_file,         // /dev/null bound over a sensitive /proc file
  mask_dir,          // an empty read-only tmpfs over a sensitive /proc dir
  proc_write,        // --sysctl: `content` written to a /proc/sys file of the box's own procfs
  secret_file,       // --secret: `content` as a new 0400 file on /run/secrets' tmpfs, owned by the workload
  readonly_rebind,   // bind a box path onto itself read-only (/proc/sys, /proc/sysrq-trigger)
  dev_tmpfs,         // fresh /dev
  dev_node,          // bind a host device node into /dev (null, zero, full, random, urandom, tty)
  devpts,            // a new devpts instance on /dev/pts, /dev/ptmx -> pts/ptmx
  dev_symlinks,      // /dev/fd, stdin, stdout, stderr, core
  tmpfs,             // /dev/shm, /tmp, --tmpfs, vdisk:ram
  sysfs,             // read-only sysfs of the box's network namespace
  bind,              // -v SRC:DST (SRC opened by the parent; index into the spec's binds)
  device_grant,      // vgpio node (opened by the parent; index into the spec's devices)
  bind_file,         // a file kern writes on the scratch tmpfs and binds over a box path (/etc/hosts...)
  remount_root_ro,   // --read-only over an overlay root
  pivot_root,        // into "root", old root detached

  // A root a configuration describes (config_root.h; the OCI mode): `index` names the entry of
  // the walker's ConfigRoot. Container paths resolve beneath ConfigRoot::root_path until
  // enter_root, beneath the new "/" after it.
  root_propagation,   // "/" made rprivate (or rslave) before anything is mounted
  bind_root,          // root_path bound onto itself, a mount point for pivot_root
  config_mount,       // mounts[index]: any type, flags, data, bind/rbind, propagation, setattr
  default_devices,    // the default nodes (null, zero, ...) where the root has none of its own
  config_device,      // devices[default_devices + index]: a node made, or bound from the host
  dev_links,          // /dev/fd, stdin, stdout, stderr; /dev/ptmx -> pts/ptmx with a devpts
  readonly_dev,       // the read-only /dev mount (mounts[readonly_dev]) made read-only now
  hooks_before_enter, // the launcher runs prestart/createRuntime/createContainer hooks, then 'P'
  enter_root,         // pivot_root into root_path (chroot with no_pivot)
  sysctl,             // sysctl[index] written through the container's procfs
  config_readonly,    // readonly_paths[index] bound onto itself read-only
  config_mask,        // masked_paths[index]: the checked /dev/null or an empty read-only tmpfs
  root_readonly,      // the new "/" remounted read-only
  final_propagation,  // the new "/" given rootfsPropagation
  oom_score_adj,      // the process's oom_score_adj
};

struct MountStep {
  MountStepKind kind;
  std::string target;     // box path, or the scratch-relative name for scratch steps
  std::string source;     // host path (dev_node, bind, device_grant, mask_file) for display
  uint64_t size = 0;      // tmpfs size in bytes, 0 = kernel default
  unsigned mode = 0;      // tmpfs mode
  bool read_only = false;
  int index = -1;         // bind / device_grant: index into BoxSpec::binds / devices
  std::string origin;     // what asked for it: "default", "--tmpfs", "-v", "vgpio:x"
  std::string content;    // bind_file, proc_write, secret_file: the bytes written
  uint32_t uid = 0, gid = 0;  // secret_file: its owner in the box (the workload's ids)
  bool copy_up = false;       // bind of an empty named volume: the image's tree at target first
  bool skip_unreachable = false;  // bind: a target the box cannot make is skipped, not fatal
};

std::vector<MountStep> build_mount_plan(const BoxSpec& spec);
std::string step_kind_name(MountStepKind kind);
// One line per step, as --plan prints it.
std::string describe_step(const MountStep& step);

// The sensitive /proc entries that are masked in every box.
const std::vector<std::string>& masked_proc_files();
const std::vector<std::string>& masked_proc_dirs();
// The host device nodes bound into every box's /dev.
const std::vector<std::string>& safe_dev_nodes();

}  // namespace kern
