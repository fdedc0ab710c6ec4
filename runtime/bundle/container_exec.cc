// exec_container (see container_exec.h).
#include "runtime/bundle/container_exec.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "runtime/box_exec.h"
#include "runtime/box_join.h"
#include "runtime/cgroup/v1.h"
#include "runtime/bundle/container_create.h"
#include "runtime/bundle/live_container.h"
#include "runtime/bundle/oci_plan.h"
#include "runtime/bundle/seccomp_agent.h"
#include "runtime/bundle/seccomp_cache.h"
#include "runtime/caps.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

namespace kern::bundle {

namespace {

// The process document: --process FILE, or create's with the command line's changes.
Result<Process> exec_process(const Config& saved, const ExecRequest& req) {
  Process p;
  if (!req.process_file.empty()) {
    KERN_TRY_ASSIGN(std::string text, sys::read_file(AT_FDCWD, req.process_file, 4 << 20));
    // Parsed as the process member of a document, so refusals name "process.args[0]" and so on.
    auto c = parse_config(R"({"ociVersion": "1.2.0", "process": )" + text + "}");
    if (!c) return fail(std::move(c).error().with_context("--process \"" + req.process_file + "\""));
    p = std::move(*c->process);
  } else {
    if (!saved.process) return fail(ErrorKind::config, 0, "the container's config.json has no process to start from");
    p = *saved.process;
    p.args = req.args;
    p.terminal = req.tty;
  }
  if (p.args.empty()) return fail(ErrorKind::usage, 0, "kern oci exec: no command (give --process FILE or the command after the id)");
  if (!req.cwd.empty()) p.cwd = req.cwd;
  for (const auto& e : req.env) {
    std::string key = e.substr(0, e.find('='));
    bool replaced = false;
    for (auto& have : p.env)
      if (have.compare(0, key.size() + 1, key + "=") == 0) {
        have = e;
        replaced = true;
      }
    if (!replaced) p.env.push_back(e);
  }
  if (!req.user.empty()) {
    char* end = nullptr;
    unsigned long uid = std::strtoul(req.user.c_str(), &end, 10);
    unsigned long gid = p.user.gid;
    if (end != req.user.c_str() && *end == ':') gid = std::strtoul(end + 1, &end, 10);
    if (end == req.user.c_str() || *end != '\0')
      return fail(ErrorKind::usage, 0, "--user \"" + req.user + "\": expected UID[:GID] as numbers");
    p.user.uid = static_cast<uint32_t>(uid);
    p.user.gid = static_cast<uint32_t>(gid);
  }
  if (!req.additional_gids.empty()) {
    p.user.additional_gids.clear();
    for (const auto& g : req.additional_gids) {
      char* end = nullptr;
      errno = 0;
      unsigned long gid = std::strtoul(g.c_str(), &end, 10);
      if (g.empty() || g[0] == '-' || *end != '\0' || errno != 0 || gid > UINT32_MAX)
        return fail(ErrorKind::usage, 0, "--additional-gids \"" + g + "\": expected a group id as a number");
      p.user.additional_gids.push_back(static_cast<uint32_t>(gid));
    }
  }
  if (!req.caps.empty()) {
    if (!p.capabilities) p.capabilities = Capabilities{};
    for (const auto& c : req.caps)
      // Not inheritable: the process's inheritable set stays the document's (CVE-2022-29162).
      for (auto* set : {&p.capabilities->bounding, &p.capabilities->effective, &p.capabilities->permitted})
        set->push_back(c);
  }
  if (req.no_new_privs) p.no_new_privileges = true;
  return p;
}

}  // namespace

Result<int> exec_container(const StateDir& dir, const ExecRequest& req) {
  KERN_TRY_ASSIGN(ContainerRecord rec, dir.read(req.id));
  ContainerStatus now = current_status(rec);
  // --ignore-paused, as runc's: the process is made in the frozen cgroup and runs once resumed.
  if (!(req.ignore_paused && now == ContainerStatus::paused)) KERN_TRY(allowed(Verb::exec, req.id, now));
  KERN_TRY_ASSIGN(Config saved, saved_config(dir, req.id));
  KERN_TRY_ASSIGN(Process p, exec_process(saved, req));
  if (p.terminal && req.detach && req.console_socket.empty())
    return fail(ErrorKind::usage, 0, "kern oci exec --tty --detach needs --console-socket");
  std::vector<std::string> warnings;
  KERN_TRY_ASSIGN(ExecPlan plan, oci_exec_plan(p, warnings));
  for (const auto& w : warnings) log::warning(w);
  for (unsigned i = 0; i < req.preserve_fds; ++i) plan.pass_fds.emplace_back(3 + static_cast<int>(i), 3 + static_cast<int>(i));

  std::optional<CompiledSeccomp> prog;
  if (saved.linux_config && saved.linux_config->seccomp) {
    auto c = compile_seccomp_cached(*saved.linux_config->seccomp, seccomp_cache_dir(dir.root()));
    if (!c) return fail(std::move(c).error().with_context("the container's linux.seccomp"));
    prog = std::move(*c);
  }

  ExecTarget target;
  target.name = req.id;
  target.cgroup = rec.cgroup;
  V1Dirs v1 = rec.cgroups_v1;
  if (!req.cgroups.empty()) {
    if (rec.cgroup.empty()) return fail(ErrorKind::usage, 0, "--cgroup: container \"" + req.id + "\" has no cgroup");
    KERN_TRY(sub_cgroups(req.cgroups, &target.cgroup, &v1));
  }
  for (const auto& [hierarchy, dir1] : v1) target.join_cgroup_dirs.push_back(dir1);
  // The container's process, checked to be its own (start time, cgroup) once its pidfd is held:
  // from here the pidfd names that process or a dead one. The process itself is joined, never a
  // child of it, whose namespaces the workload may have made.
  KERN_TRY_ASSIGN(target.join_pidfd, open_recorded(rec));
  if (!target.join_pidfd) return fail(ErrorKind::usage, 0, "container \"" + req.id + "\" is not running");
  target.join_pid = rec.pid;
  KERN_TRY_ASSIGN(target.lockdown.namespaces, namespaces_to_join(rec.pid));
  target.seccomp = prog ? SeccompProgram{prog->program.data(), static_cast<unsigned short>(prog->program.size())}
                        : SeccompProgram{nullptr, 0};
  if (prog && prog->notify) {
    const Seccomp& sc = *saved.linux_config->seccomp;
    std::string state = hook_state(rec, ContainerStatus::running);
    target.seccomp_agent = [&sc, state](pid_t pid, int listener) {
      return send_to_seccomp_agent(sc, pid, state, listener);
    };
  }

  ExecTerminal term;
  term.tty = p.terminal;
  term.interactive = p.terminal && req.console_socket.empty();
  if (p.terminal && (p.console_height || p.console_width)) {
    struct winsize ws {};
    ws.ws_row = static_cast<unsigned short>(p.console_height.value_or(0));
    ws.ws_col = static_cast<unsigned short>(p.console_width.value_or(0));
    term.size = ws;
  }
  ExecDetached det;
  det.enabled = req.detach;
  if (!req.pid_file.empty() || !req.console_socket.empty()) {
    det.on_started = [&](pid_t pid, int master) -> Status {
      if (master >= 0 && !req.console_socket.empty()) KERN_TRY(send_console(req.console_socket, master));
      if (!req.pid_file.empty()) KERN_TRY(write_pid_file(req.pid_file, pid));
      return {};
    };
  }
  return run_exec(target, plan, term, det);
}

}  // namespace kern::bundle
