// `kern oci create` and `kern oci start`: an OCI container on the launch seam. create is
// prepare + BoxHandle::start held before the workload's spawn: the root is built, the terminal
// made, box init waits on the container's hold socket (<root>/<id>/start.sock) and `create`
// returns, leaving it to the engine (box init outlives it: no parent-death signal in this mode).
// start connects to that socket: box init execs the process itself, which is the container's
// pid 1 as with runc; the connection's close-on-exec end says it did, a message why it did not.
// Each runs in the process of its verb.
#pragma once

#include <string>

#include "runtime/bundle/oci_plan.h"
#include "runtime/bundle/state_dir.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

struct CreateRequest {
  std::string id;
  std::string bundle = ".";
  std::string pid_file;        // box init's host pid, written once it waits (runc's --pid-file)
  std::string console_socket;  // process.terminal: the pty master is sent there (SCM_RIGHTS)
  // run in the foreground: with process.terminal and no console socket the pty master stays with
  // the caller, which relays it to its own stdio (runc run does the same); create and run -d
  // refuse a terminal without a socket.
  bool foreground = false;
  CreateOptions options;
  bool systemd_cgroup = false;
};

// Annotations kern reads from config.json.
inline constexpr const char* kRequireLimitsAnnotation = "io.kern.require-limits";  // "true": refuse uncapped
// A file descriptor of the create verb's (the engine passes it open) that gets one JSON line
// once the container is created: {"event":"created","id":...,"pid":...,"enforcement":{...}}.
inline constexpr const char* kReportFdAnnotation = "io.kern.report-fd";
// Annotations kern adds to the state document: what the kernel said was in force.
inline constexpr const char* kEnforcementAnnotation = "io.kern.enforcement";  // a JSON object as text

// On failure nothing is left: no state directory, cgroup or process.
// The state document hooks and the seccomp agent get: the specification's, with the
// configuration's annotations only (kern's read-back is for `state`, not part of what the
// engine configured).
std::string hook_state(ContainerRecord r, ContainerStatus s);

// `created`, when given, gets the configuration the container was made from (run hands it to
// start and delete, which then do not read and parse the kept copy again).
Status create_container(const StateDir& dir, const CreateRequest& req, UniqueFd* console = nullptr,
                        Config* created = nullptr);

// Releases a created container's process; fails with the process's own error when its execve
// failed (the container is stopped then). `cfg`: the configuration create kept, when the caller
// has it from that create (run); else it is read from the container's directory. `started`,
// when given, gets the container's record as start wrote it.
Status start_container(const StateDir& dir, const std::string& id, const Config* cfg = nullptr,
                       ContainerRecord* started = nullptr);

// --console-socket: connects and sends `master` (SCM_RIGHTS), as runc does.
Status send_console(const std::string& path, int master);
// --pid-file: the decimal pid, no newline, written atomically.
Status write_pid_file(const std::string& path, pid_t pid);

// The config.json kept in the container's directory at create (exec and delete read it).
Result<Config> saved_config(const StateDir& dir, const std::string& id);

// delete: poststop hooks after the container is gone (failures are warnings, as the
// specification says), from the config kept at create.
void run_poststop(const Config& c, const ContainerRecord& r);

}  // namespace kern::bundle
