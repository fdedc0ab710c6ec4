// BoxSpec: everything one box is, decided before clone and immutable after. Data only: no
// behaviour lives here. Built by cli/spec_builder.cc (the only place that knows precedence:
// flag > profile > image config > built-in default); read by the launcher and the child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kern {

// $PATH of a box whose image sets none, and the search path for a bare command name.
inline constexpr const char* kDefaultBoxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// none: a network namespace of the box's own with loopback only. host: the caller's. private_net:
// a namespace of its own that a user-mode stack (pasta, runtime/net/private_net.h) connects.
enum class NetMode { none, host, private_net };
// allowlist_audit: the allowlist, but calls on no list run and are recorded (KERN_SECCOMP=
// allowlist-audit, a validation mode that does not lock the box down; runtime/seccomp_audit.h).
enum class SeccompMode { allowlist, denylist, allowlist_audit };

// What to do about a per-box cgroup (kern-box(1)).
enum class CgroupPolicy {
  best_effort,     // default: caps where a delegated subtree exists, one warning otherwise
  require,         // --require-limits / KERN_REQUIRE_LIMITS: refuse (125) unless read back in force
  allow_uncapped,  // --allow-uncapped / KERN_ALLOW_UNCAPPED: uncapped silently where none
  none,            // KERN_NO_SCOPE: no per-box cgroup at all
};

// Whether the uncapped warning is wanted for a box that asked for no cap (only the built-in
// defaults are lost). Called only then, so what it reads (kern.toml's [kern] warn_uncapped: the
// spec carries it, cli/profile_apply.cc fills it in) costs nothing where boxes get a cgroup.
// Empty: wanted.
using DefaultCapsWarning = std::function<bool()>;

struct BindMount {
  std::string source;  // host path, already checked against the refusal list
  std::string dest;    // absolute, normalised, inside the box
  bool read_only = false;
  // A fresh directory the launcher creates (0700, ours) before clone and removes at teardown:
  // vdisk on a [[disk]] backend. `source` is the path to create; it must not exist yet.
  bool ephemeral = false;
  // A directory the launcher creates (0700) when it is missing and keeps: a persistent vdisk.
  bool create_missing = false;
  std::string origin;  // "-v", "vdisk:data": for --plan and messages
  // A named volume (-v NAME:DST, --mount type=volume): its name, "" for a bind. `source` is then
  // the volume's _data directory, made by the command line before the start.
  std::string volume;
  // The volume is empty: before it is bound, what the image has at `dest` is copied into it, as
  // the box sees it (modes, owners, symlinks), and _data takes that directory's mode and owner.
  bool copy_up = false;
  // A pod's name service file (--pod, --network NAME): where the box cannot make the target (a
  // directory of an unmapped owner) it goes on without it and says so, as with --net private's.
  bool skip_unreachable = false;
};

struct TmpfsMount {
  std::string dest;
  uint64_t size_bytes = 0;  // 0: the kernel default (half of RAM), still counted in the cgroup
  std::string origin;       // "--tmpfs", "vdisk:scratch": for --plan and messages
};

// A host device node granted to the box (vgpio). The node is opened by the parent and the box
// gets a bind of that opened file, so a path swapped after validation cannot change what is bound.
struct DeviceGrant {
  std::string host_path;
  std::string box_path;  // under /dev
  std::string origin;    // "vgpio:sensors"
  // The identity checked when the grant was decided (makedev(major, minor) of a character
  // device). The launcher compares fstat() of the node it opens with it and refuses a mismatch,
  // so a node swapped after the check is never bound.
  uint64_t rdev = 0;
};

// One io.max line (cgroup v2 blk-throttle): a whole block device and its caps, 0 = not capped.
struct IoThrottle {
  uint32_t major = 0, minor = 0;
  std::string device;  // the path it was named by, for messages
  uint64_t rbps = 0, wbps = 0, riops = 0, wiops = 0;
};

// -p [IP:]HOSTPORT:BOXPORT[/tcp|udp] of --net private.
struct PortPublish {
  std::string host_ip;  // "" = every address of the host; else a literal IPv4 or IPv6 address
  uint16_t host_port = 0;
  uint16_t box_port = 0;
  bool udp = false;
};

// --net private: what the box's network gets, decided before clone.
struct PrivateNet {
  std::vector<PortPublish> publish;
  std::vector<std::string> nameservers;  // for the box's /etc/resolv.conf, in order
  std::vector<std::string> search;       // resolv.conf "search" domains (the host's)
  std::vector<std::string> options;      // resolv.conf "options" (the host's)
  // The address in the box that pasta answers DNS on, forwarding to the host's first
  // resolver (used when the host only has loopback resolvers); "" = none.
  std::string dns_forward;
  std::vector<std::pair<std::string, std::string>> hosts;  // --add-host NAME:IP, in order
  // --add-host NAME:host-gateway: pasta maps the gateway's address to the host's loopback, so
  // the box reaches the host's own services there (as podman's host.containers.internal); off,
  // nothing of the host's loopback is reachable.
  bool map_gateway = false;
  std::string pasta;  // the pasta binary, found on $PATH by the spec builder
};

// --pod NAME, --network NAME: the box joins the user namespace of a pod's holder and, in it, the
// namespaces `ns_flags` names (runtime/pod/pod_holder.h), instead of making them.
struct PodJoin {
  std::string name;
  std::string kind;  // "pod" or "network"
  pid_t holder_pid = 0;
  uint64_t holder_start = 0;  // /proc/PID/stat starttime: the holder checked before it is joined
  int ns_flags = 0;           // CLONE_NEWNET, and for a pod CLONE_NEWIPC | CLONE_NEWUTS
};

struct Limits {
  std::optional<uint64_t> memory_max;       // bytes; default 512 MiB when the box gets a cgroup
  std::optional<uint64_t> memory_swap_max;  // default 0
  std::optional<uint64_t> pids_max;         // default 512
  std::optional<double> cpus;               // cpu.max quota / 100000 us period
  std::string cpuset_cpus;                  // "" = not set
  std::string cpuset_mems;                  // "" = not set (a vcpu profile's numa node)
  std::optional<int> nice;
  std::vector<IoThrottle> io_max;           // one entry per device
};

// One resource limit of the workload (setrlimit(2)).
struct RlimitSetting {
  int resource = 0;
  uint64_t soft = 0, hard = 0;
  std::string name;  // "RLIMIT_NOFILE", for messages
};

struct BoxSpec {
  std::string name;

  // Root file system: the overlay's read-only lower layers, topmost first. A --rootfs box has
  // one. The directories are never written to.
  std::vector<std::string> lower_dirs;
  bool read_only = false;
  std::string image_ref;  // for reports; empty for --rootfs
  std::string image_digest;  // the image's manifest digest (kern diff and commit find its tree by it)
  // /tmp is the image's own directory, not a tmpfs (kern build: what a RUN writes there is kept
  // in its layer, as Docker keeps it).
  bool image_tmp = false;

  // The workload.
  std::vector<std::string> argv;  // argv[0] resolved inside the box by the child
  std::vector<std::string> env;   // "K=V", complete: nothing of the host's is added
  std::string cwd = "/";
  uid_t uid = 0;  // inside the box
  gid_t gid = 0;
  bool user_set = false;  // -u given (or image User): the child switches ids
  bool interactive = false;  // -i: stdin kept open to the pty
  bool tty = false;          // -t: a pty

  std::string hostname;
  NetMode net = NetMode::none;
  // --egress-allow: canonical domains the box may reach through kern's filtering proxy (the box's
  // own network stays loopback-only; runtime/net/egress.h). Empty: no proxy.
  std::vector<std::string> egress_allow;
  PrivateNet private_net;  // net == NetMode::private_net only
  std::optional<PodJoin> pod;  // net == NetMode::none: the pod's network is the box's
  // --net host from kern's command line: the host's /etc/hosts and /etc/resolv.conf as read
  // then, given to the box as engines do (the box shares the host's network and resolvers).
  struct HostNameFiles {
    std::string hosts, resolv_conf;  // "": the host has none
  };
  std::optional<HostNameFiles> host_name_files;
  uint64_t timeout_ms = 0;  // --timeout; 0 = none

  // Identity mapping: the caller's single uid/gid becomes 0, or a subordinate range through
  // newuidmap/newgidmap (--uid-range).
  bool uid_range = false;
  // The scratch dir (StartContext::scratch_dir) is the box's own directory on the host, not a
  // tmpfs the box mounts: its overlay upper outlives the box (--restart: the next box of the
  // name finds what this one wrote).
  bool upper_on_host = false;
  // -l/--label, --stop-signal, --stop-timeout: kept in the box's record for kern ps, inspect and
  // stop (the box itself never sees them).
  std::vector<std::pair<std::string, std::string>> labels;
  int stop_signal = 15;  // SIGTERM
  unsigned stop_timeout_s = 10;
  // --ulimit: set on the workload before its execve (never above the launcher's hard limit:
  // checked by the command line); --sysctl: namespaced knobs written through the box's own
  // procfs before /proc/sys is made read-only (/proc/sys path, value).
  std::vector<RlimitSetting> rlimits;
  std::vector<std::pair<std::string, std::string>> sysctls;
  // --secret SRC[:NAME]: NAME and the file's bytes, read by the command line; written 0400 (owned
  // by the workload's user) into a tmpfs of the box at /run/secrets, then made read-only. Never in
  // the environment, the record, inspect or a layer.
  std::vector<std::pair<std::string, std::string>> secrets;

  // Capabilities kept in every set (bit N = capability N). The always-dropped set is never in it.
  uint64_t caps_keep = 0;
  SeccompMode seccomp = SeccompMode::allowlist;
  bool security_profile_untrusted = false;
  // --apparmor: the loaded AppArmor profile the workload enters at its execve ("" none).
  std::string apparmor_profile;

  std::vector<BindMount> binds;
  std::vector<TmpfsMount> tmpfs;   // --tmpfs and vdisk:ram, in order
  std::vector<DeviceGrant> devices;

  Limits limits;
  CgroupPolicy cgroup_policy = CgroupPolicy::best_effort;
  DefaultCapsWarning default_caps_warning;  // [kern] warn_uncapped, asked only when uncapped

  // Host fds handed to the workload at fixed numbers (host fd -> box fd, box fd > 2), e.g. the
  // warm kernel's control channel. Every other inherited fd is closed.
  std::vector<std::pair<int, int>> pass_fds;

  // Caller channels (-1 = none).
  int started_fd = -1;
  int report_fd = -1;
  bool timing = false;  // KERN_TIMING
};

}  // namespace kern
