// A bundle's config.json as typed data (OCI runtime specification 1.1/1.2, the Linux parts),
// and the one parser that makes it. Pure: parse_config reads no file. Runs in the process that
// runs `kern oci create` (and `spec`, `features`, which print such documents).
//
// Parsing checks types and what the schema requires, and names the JSON path of every refusal
// ("process.args[2]: expected a string"); unknown members are ignored, as the specification
// says. What kern cannot do on this host is decided separately (check_supported), so that a
// valid document is never called malformed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::bundle {

struct IdMapping {
  uint32_t container_id = 0, host_id = 0, size = 0;
};

struct Rlimit {
  std::string type;  // "RLIMIT_NOFILE"
  uint64_t soft = 0, hard = 0;
};

struct Capabilities {
  std::vector<std::string> bounding, effective, inheritable, permitted, ambient;
};

struct ProcessUser {
  uint32_t uid = 0, gid = 0;
  std::optional<uint32_t> umask;
  std::vector<uint32_t> additional_gids;
  std::string username;  // only meaningful on Windows; kept for completeness
};

struct Process {
  bool terminal = false;
  std::optional<uint64_t> console_height, console_width;
  std::vector<std::string> args;
  std::string command_line;  // Windows only
  std::vector<std::string> env;
  std::string cwd;
  ProcessUser user;
  std::optional<Capabilities> capabilities;
  std::vector<Rlimit> rlimits;
  bool no_new_privileges = false;
  std::optional<int32_t> oom_score_adj;  // the schema says integer; the kernel's range is checked later
  std::string apparmor_profile;
  std::string selinux_label;
  // Present in the document but not carried out by kern (check_supported refuses them).
  bool has_scheduler = false, has_io_priority = false, has_exec_cpu_affinity = false;
};

struct Mount {
  std::string destination;
  std::string type;
  std::string source;
  std::vector<std::string> options;
  std::vector<IdMapping> uid_mappings, gid_mappings;
};

struct Hook {
  std::string path;
  std::vector<std::string> args, env;
  std::optional<int64_t> timeout_s;  // at least 1
};

struct Hooks {
  std::vector<Hook> prestart, create_runtime, create_container, start_container, poststart, poststop;
};

struct Namespace {
  std::string type;  // mount pid network uts ipc user cgroup time
  std::string path;  // empty: a new one
};

struct Device {
  std::string type;  // c b u p
  std::string path;
  std::optional<int64_t> major, minor;
  std::optional<uint32_t> file_mode, uid, gid;
};

struct DeviceRule {  // resources.devices
  bool allow = false;
  std::string type;    // "", a, c, b
  std::optional<int64_t> major, minor;  // absent: any
  std::string access;  // r w m
  std::string access_ignored;  // other letters the document gave, left out (as runc does)
};

struct ThrottleDevice {
  int64_t major = 0, minor = 0;
  uint64_t rate = 0;
};

struct WeightDevice {
  int64_t major = 0, minor = 0;
  std::optional<uint32_t> weight, leaf_weight;
};

struct Resources {
  // memory
  std::optional<int64_t> memory_limit, memory_reservation, memory_swap, memory_kernel, memory_kernel_tcp;
  std::optional<uint64_t> memory_swappiness;
  bool disable_oom_killer = false;
  // cpu
  std::optional<uint64_t> cpu_shares, cpu_period, cpu_burst, cpu_realtime_period;
  std::optional<int64_t> cpu_quota, cpu_realtime_runtime, cpu_idle;
  std::string cpu_cpus, cpu_mems;
  // pids
  std::optional<int64_t> pids_limit;
  // blockIO
  std::optional<uint32_t> io_weight, io_leaf_weight;
  std::vector<WeightDevice> io_weight_device;
  std::vector<ThrottleDevice> io_read_bps, io_write_bps, io_read_iops, io_write_iops;
  // hugetlb: page size ("2MB") -> limit in bytes, in document order
  std::vector<std::pair<std::string, uint64_t>> hugepage_limits;
  std::vector<DeviceRule> devices;
  std::map<std::string, std::string> unified;
  bool has_network = false, has_rdma = false;
};

struct SeccompArg {
  uint32_t index = 0;
  uint64_t value = 0, value_two = 0;
  std::string op;  // SCMP_CMP_*
};

struct SeccompRule {
  std::vector<std::string> names;
  std::string action;  // SCMP_ACT_*
  std::optional<uint32_t> errno_ret;
  std::vector<SeccompArg> args;
};

struct Seccomp {
  std::string default_action;
  std::optional<uint32_t> default_errno_ret;
  std::vector<std::string> architectures, flags;
  std::string listener_path, listener_metadata;
  std::vector<SeccompRule> syscalls;
};

struct Linux {
  std::vector<Namespace> namespaces;
  std::vector<IdMapping> uid_mappings, gid_mappings;
  std::vector<Device> devices;
  std::optional<Resources> resources;
  std::string cgroups_path;
  std::map<std::string, std::string> sysctl;
  std::optional<Seccomp> seccomp;
  std::string rootfs_propagation;  // "", private, shared, slave, unbindable
  std::vector<std::string> masked_paths, readonly_paths;
  std::string mount_label;
  std::optional<std::string> personality_domain;  // LINUX, LINUX32
  std::vector<std::string> personality_flags;
  bool has_intel_rdt = false, has_memory_policy = false, has_time_offsets = false,
       has_net_devices = false;
};

struct Config {
  std::string oci_version;
  std::string root_path;  // empty when the document has no root
  bool root_readonly = false;
  bool has_root = false;
  std::optional<Process> process;
  std::string hostname, domainname;
  std::vector<Mount> mounts;  // in document order: mounted in that order
  Hooks hooks;
  std::map<std::string, std::string> annotations;
  std::optional<Linux> linux_config;  // "linux" (a macro name under GNU dialects)
};

// The document's text -> Config. A malformed document or a wrong type is a config error naming
// the JSON path; unknown members are ignored.
Result<Config> parse_config(const std::string& text);

// The same parser on documents of one part: a Process (`kern oci exec --process`) and a
// LinuxResources (`kern oci update --resources`).
Result<Process> parse_process_document(const std::string& text);
Result<Resources> parse_resources_document(const std::string& text);

// What this host and kern can carry out, decided once before create (the pure part: the facts
// are passed in).
struct HostFacts {
  bool selinux = false;   // /sys/fs/selinux is mounted and enforcing or permissive
  bool apparmor = false;  // /sys/kernel/security/apparmor exists
};

// Refuses, with the JSON path and the reason, what kern does not carry out: a document that asks
// for it must not run with it silently left out.
Status check_supported(const Config& c, const HostFacts& host);

}  // namespace kern::bundle
