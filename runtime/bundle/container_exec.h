// `kern oci exec`: a new process in a running container, through kern exec's machinery
// (runtime/box_exec.h): the container's namespaces joined through a pidfd of its init (checked
// against the recorded start time), its cgroup, and the lockdown of config.json's process as the
// engine gives it (--process) or as create recorded it with the command line's changes: each
// capability set, rlimits, noNewPrivileges, and the container's seccomp program. Runs in the
// process of the verb.
#pragma once

#include <string>
#include <vector>

#include "runtime/bundle/state_dir.h"

namespace kern::bundle {

struct ExecRequest {
  std::string id;
  std::string process_file;       // --process: a runtime-spec Process document
  std::vector<std::string> args;  // or the command after the id
  bool tty = false;
  bool detach = false;
  std::string pid_file, console_socket, cwd;
  std::vector<std::string> env;   // KEY=VALUE, added to (or replacing) the process's
  std::string user;               // UID[:GID]
  std::vector<std::string> additional_gids;  // -g: replace the process's additionalGids
  std::vector<std::string> caps;  // added to bounding, effective and permitted (as runc)
  bool no_new_privs = false;
  unsigned preserve_fds = 0;
  bool ignore_paused = false;  // --ignore-paused: a paused container is not refused
  std::vector<std::string> cgroups;  // --cgroup [CONTROLLER[,...]:]PATH: a sub cgroup (sub_cgroups)
};

// The process's exit code (128+N for a signal N), or 0 once it runs with --detach.
Result<int> exec_container(const StateDir& dir, const ExecRequest& req);

}  // namespace kern::bundle
