// The verbs of pods and named networks, shared by `kern pod` and `kern network` (a named network
// is a pod that shares its network alone): create, start, stop, rm, ls, inspect, and the boxes
// that joined one (labelled io.kern.pod=NAME or io.kern.network=NAME).
#pragma once

#include <string>
#include <vector>

#include "cli/net_flags.h"
#include "runtime/pod/pod_store.h"
#include "runtime/registry.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct PodCreateOptions {
  std::string name;
  std::string net;  // none | private ("": private when ports are published, else none)
  NetOptions netx;  // -p, --dns, --add-host
  std::vector<std::string> labels;  // K=V
  bool uid_range = false;
  bool quiet_if_running = false;  // kern compose: an existing running pod of the name is kept
};

Result<int> pod_create(pod::Kind k, const PodCreateOptions& o);
Result<int> pod_start(pod::Kind k, const std::vector<std::string>& names);
// Stops the boxes that joined, then the holder.
Result<int> pod_stop(pod::Kind k, const std::vector<std::string>& names, unsigned timeout_s);
// Refuses a pod whose boxes run unless `force` (then removes them); removes the exited ones,
// the holder and every file of the pod.
Result<int> pod_rm(pod::Kind k, const std::vector<std::string>& names, bool force, bool ignore_missing);
Result<int> pod_ls(pod::Kind k, bool quiet);
Result<int> pod_inspect(pod::Kind k, const std::vector<std::string>& names);
// The boxes (running and exited) that joined the pod.
std::vector<BoxRecord> pod_members(const std::string& runtime_dir, pod::Kind k, const std::string& name);
// Runs this kern binary with `args` (kern stop, kern rm for a pod's boxes); its exit code.
Result<int> run_self(const std::vector<std::string>& args, bool quiet_stdout = false);

}  // namespace kern::cli
