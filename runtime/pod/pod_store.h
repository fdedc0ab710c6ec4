// Pods and named networks on the host: one directory each under the runtime dir
// (<runtime>/pods/NAME, <runtime>/networks/NAME), holding the record (record.json), the name
// service files its boxes bind (hosts, hostname, resolv.conf) and the liveness lock. A pod is a
// set of namespaces (user, net and, for a pod, ipc and uts) held by a small holder process that
// its supervisor owns (pod_holder.h); a named network is the same with the network alone.
//
// Who runs a pod is decided by a lock, never by what the record says: the supervisor holds an
// exclusive flock on <dir>/lock while the holder lives, and the kernel drops it when the
// supervisor ends, SIGKILL included.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::pod {

// A pod shares the network, ipc and uts namespaces (and the user namespace they belong to), as
// podman's default; a named network shares the network alone.
enum class Kind { pod, network };
const char* kind_word(Kind k);  // "pod", "network"

struct PodRecord {
  std::string name;
  Kind kind = Kind::pod;
  std::string id;  // 12 hex digits
  int64_t created_unix = 0;
  std::string net = "none";                         // none | private
  std::vector<std::string> publish, dns, add_host;  // as given to create (kept for pod start)
  std::vector<std::string> ports;                   // "0.0.0.0:8080->80/tcp"
  std::vector<std::pair<std::string, std::string>> labels;
  int ns_flags = 0;  // the CLONE_NEW* namespaces a member joins besides the user namespace
  // --uid-range: the holder's user namespace maps the caller's subordinate ids too (newuidmap),
  // so that its boxes may run as other users; else the caller's uid alone, as 0.
  bool uid_range = false;
  pid_t supervisor_pid = 0;
  pid_t holder_pid = 0;
  uint64_t holder_start = 0;  // /proc/PID/stat starttime of the holder
  std::string state = "created";  // running | stopped
};

std::string kind_dir(const std::string& runtime_dir, Kind k);  // <runtime>/pods or /networks
std::string pod_dir(const std::string& runtime_dir, Kind k, const std::string& name);

std::string record_json(const PodRecord& r);
Result<PodRecord> parse_record(const std::string& text);
// The record of NAME; an error of kind usage naming it when there is none.
Result<PodRecord> read_pod(const std::string& runtime_dir, Kind k, const std::string& name);
Status write_pod(const std::string& dir, const PodRecord& r);
// Whether a supervisor holds the pod's lock (its namespaces exist). The record's state says
// "running" also after a SIGKILL; this does not.
bool pod_running(const std::string& dir);
// Every pod (or network) with a record, by name; state corrected by pod_running.
std::vector<PodRecord> list_pods(const std::string& runtime_dir, Kind k);

// The pod's /etc/hosts: `base` (localhost lines and --add-host), then one "127.0.0.1 NAME" line
// per box that joined. Rewritten in place under a lock (the boxes bind the file itself, so a
// box that joined earlier sees the names of later ones).
Status write_hosts_base(const std::string& dir, const std::string& base);
Status add_host_name(const std::string& dir, const std::string& name);

}  // namespace kern::pod
