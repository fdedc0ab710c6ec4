// run_hooks (see oci_hooks.h). The verb's process forks one child per hook; the child runs only
// async-signal-safe calls between fork and execveat.
#include "runtime/bundle/oci_hooks.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string_view>

#include "runtime/box_join.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"

namespace kern::bundle {

namespace {

std::vector<char*> c_array(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the container (where.container_pid): the path is the container's (startContainer), found
// after joining its namespaces; else the caller's, opened here (a createContainer hook runs the
// host's program).
Status run_one(const Hook& h, const std::string& name, const std::string& state, const HookPlace& where,
               unsigned long long namespaces) {
  const int container_pidfd = where.container_pidfd;
  const bool in_container = container_pidfd >= 0 && where.container_pid > 0;
  const std::string& cwd = where.cwd;
  struct sock_fprog prog = {0, nullptr};
  if (in_container && where.seccomp != nullptr && !where.seccomp->empty())
    prog = {static_cast<unsigned short>(where.seccomp->size()), const_cast<struct sock_filter*>(where.seccomp->data())};
  UniqueFd exe_fd;
  if (!in_container) {
    int exe = ::open(h.path.c_str(), O_PATH | O_CLOEXEC);
    if (exe < 0) return fail_errno("open " + name + " \"" + h.path + "\"", ErrorKind::config);
    exe_fd.reset(exe);
  }
  UniqueFd in_write;
  KERN_TRY_ASSIGN(UniqueFd in_read, sys::make_pipe(O_CLOEXEC, &in_write));
  std::vector<std::string> args = h.args.empty() ? std::vector<std::string>{h.path} : h.args;
  std::vector<std::string> env = h.env;
  std::vector<char*> argv = c_array(args), envp = c_array(env);
  int pidfd = -1;
  pid_t pid = static_cast<pid_t>(::syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, nullptr, &pidfd, nullptr, nullptr));
  if (pid < 0) return fail_errno("clone (" + name + ")");
  if (pid == 0) {
    ::dup2(in_read.get(), 0);
    // A hook gets the state on stdin and the caller's stdout and stderr, nothing else of ours.
    ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
    if (in_container) {
      // Every namespace of the container's; its pid namespace holds only the children of this
      // process, so the hook is one, and this process passes its status on.
      if (::setns(container_pidfd, static_cast<int>(namespaces)) != 0) _exit(126);
      pid_t hook = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
      if (hook == 0) {
        // The container's filter; without CAP_SYS_ADMIN here the kernel wants no_new_privs.
        if (prog.len != 0 && ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0 &&
            (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
             ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0))
          _exit(126);
        ::execve(h.path.c_str(), argv.data(), envp.data());
        _exit(errno == ENOENT ? 127 : 126);
      }
      int st = 0;
      while (hook > 0 && ::waitpid(hook, &st, 0) < 0 && errno == EINTR) {
      }
      _exit(hook < 0 ? 126 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    if (container_pidfd >= 0 && ::setns(container_pidfd, CLONE_NEWNS) != 0) _exit(126);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
    ::syscall(SYS_execveat, exe_fd.get(), "", argv.data(), envp.data(), AT_EMPTY_PATH);
    _exit(errno == ENOENT ? 127 : 126);
  }
  UniqueFd child(pidfd);
  in_read.reset();
  // A hook that does not read its stdin must not block us: the state fits a pipe's buffer in
  // any real case, and a closed reader is not an error (SIGPIPE is ignored for the write).
  struct sigaction ign {}, old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  (void)sys::write_all_raw(in_write.get(), state.data(), state.size());
  ::sigaction(SIGPIPE, &old, nullptr);
  in_write.reset();
  int timeout_ms = h.timeout_s ? static_cast<int>(*h.timeout_s * 1000) : -1;
  struct pollfd p = {child.get(), POLLIN, 0};
  int rc;
  do rc = ::poll(&p, 1, timeout_ms);
  while (rc < 0 && errno == EINTR);
  if (rc == 0) {
    ::syscall(SYS_pidfd_send_signal, child.get(), SIGKILL, nullptr, 0);
    ::waitpid(pid, nullptr, 0);
    return fail(ErrorKind::setup, ETIMEDOUT,
                name + " \"" + h.path + "\" did not finish within " + std::to_string(*h.timeout_s) + " s");
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  std::string how = WIFSIGNALED(status) ? std::string("killed by signal ") + std::to_string(WTERMSIG(status))
                                        : "exit status " + std::to_string(WEXITSTATUS(status));
  return fail(ErrorKind::setup, 0, name + " \"" + h.path + "\" failed (" + how + ")");
}

}  // namespace

Status run_hooks(const std::vector<Hook>& hooks, const char* kind, const std::string& state_json,
                 const HookPlace& where) {
  unsigned long long ns = 0;
  if (where.container_pidfd >= 0 && where.container_pid > 0) {
    KERN_TRY_ASSIGN(ns, namespaces_to_join(where.container_pid));
  }
  for (size_t i = 0; i < hooks.size(); ++i)
    KERN_TRY(run_one(hooks[i], std::string("hooks.") + kind + "[" + std::to_string(i) + "]", state_json, where, ns));
  return {};
}

void run_hooks_warning(const std::vector<Hook>& hooks, const char* kind, const std::string& state_json) {
  for (size_t i = 0; i < hooks.size(); ++i) {
    auto r = run_one(hooks[i], std::string("hooks.") + kind + "[" + std::to_string(i) + "]", state_json, HookPlace{}, 0);
    if (!r) log::warning(r.error().what());
  }
}

}  // namespace kern::bundle
