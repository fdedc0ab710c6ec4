// Step 3 of finding a cgroup subtree (subtree.h): a scope with Delegate=yes from the systemd
// user manager, for a kern that runs where it may not write (a login session's scope). Parent
// (launcher) side.
//
// Moving a process between cgroups needs write access to the common ancestor's cgroup.procs,
// which a process in a session scope never has towards its user manager's subtree; only systemd
// can do that move. So:
//   - once per user (recorded in RUNTIME/systemd-scope): `systemd-run --user --scope
//     -p Delegate=yes --unit=kern-subtree-UID.scope -- sleep infinity` makes the scope, held
//     open by that sleeper, whose cgroup `systemctl --user show -p ControlGroup` names; the
//     sleeper is then moved into the scope's keeper/ leaf (AttachProcessesToUnit) so that the
//     scope's own cgroup may enable controllers;
//   - per box: one AttachProcessesToUnit call moves kern itself into launch-PID/ of the scope,
//     after which the box cgroup under SCOPE/kern is kern's to create and clone into.
// Everything runs with a deadline; any failure is an Error whose message goes into the one
// uncapped warning (or the --require-limits refusal).
#include "runtime/cgroup/systemd_scope.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime/sys/env.h"
#include "runtime/sys/fdio.h"

extern char** environ;

namespace kern {
namespace {

constexpr int kDeadlineMs = 5000;

std::string find_program(const std::string& name) {
  std::string path = sys::env_value("PATH");
  size_t i = 0;
  while (i <= path.size()) {
    size_t e = path.find(':', i);
    if (e == std::string::npos) e = path.size();
    std::string cand = path.substr(i, e - i) + "/" + name;
    if (e > i && ::access(cand.c_str(), X_OK) == 0) return cand;
    i = e + 1;
  }
  return {};
}

void sleep_ms(long ms) {
  struct timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  ::nanosleep(&ts, nullptr);
}

// Runs argv to the end within the deadline; stdout is returned, stderr goes to /dev/null.
// `detach`: do not wait (the child gets its own session and keeps running).
Result<std::string> run(const std::vector<std::string>& argv, bool detach = false) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return fail_errno("pipe2");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (detach) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  else posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGMASK;
  if (detach) flags |= POSIX_SPAWN_SETSID;
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  UniqueFd rd(out[0]);
  if (rc != 0) return fail(ErrorKind::host_unsupported, rc, "posix_spawn " + argv[0]);
  if (detach) return std::string();
  std::string text;
  ::fcntl(rd.get(), F_SETFL, O_NONBLOCK);
  int status = 0;
  for (int waited = 0;; waited += 5) {
    char buf[512];
    ssize_t n;
    while ((n = ::read(rd.get(), buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (waited > kDeadlineMs) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return fail(ErrorKind::host_unsupported, ETIMEDOUT, argv[0] + " did not answer");
    }
    sleep_ms(5);
  }
  char buf[512];
  ssize_t n;
  while ((n = ::read(rd.get(), buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(ErrorKind::host_unsupported, 0, argv[0] + " failed (status " + std::to_string(status) + ")");
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

struct Tools {
  std::string systemd_run, systemctl, busctl;
};

Status attach(const Tools& t, const std::string& unit, const std::string& sub, pid_t pid) {
  KERN_TRY(run({t.busctl, "--user", "--timeout=5", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                "org.freedesktop.systemd1.Manager", "AttachProcessesToUnit", "ssau", unit, sub, "1",
                std::to_string(pid)}));
  return {};
}

bool lists_pid(const std::string& procs_file, pid_t pid) {
  std::string text;
  if (read_knob_file(AT_FDCWD, procs_file, &text) != 0) return false;
  std::string p = std::to_string(pid);
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string::npos) e = text.size();
    if (text.compare(i, e - i, p) == 0) return true;
    i = e + 1;
  }
  return false;
}

}  // namespace

Result<Subtree> systemd_subtree(const CgroupHost& host, const std::vector<std::string>& extra) {
  // No user manager here: nothing worth a word in the warning.
  std::string xdg = sys::env_value("XDG_RUNTIME_DIR");
  bool manager = !sys::env_value("DBUS_SESSION_BUS_ADDRESS").empty() ||
                 (!xdg.empty() && ::access((xdg + "/bus").c_str(), F_OK) == 0);
  if (host.runtime_dir.empty() || host.mount.empty() || !manager) return fail(ErrorKind::host_unsupported, 0, "");
  Tools t{find_program("systemd-run"), find_program("systemctl"), find_program("busctl")};
  if (t.systemd_run.empty() || t.systemctl.empty() || t.busctl.empty())
    return fail(ErrorKind::host_unsupported, 0, "a systemd user bus is there but systemd-run, systemctl or busctl is not");

  const std::string unit = "kern-subtree-" + std::to_string(host.euid) + ".scope";
  const std::string record = host.runtime_dir + "/systemd-scope";
  std::string rel;
  {
    std::string text;
    if (read_knob_file(AT_FDCWD, record, &text) == 0 && text.rfind(unit + "\n/", 0) == 0) {
      std::string r = text.substr(unit.size() + 1);
      while (!r.empty() && r.back() == '\n') r.pop_back();
      struct stat st;
      if (::stat((host.mount + r).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) rel = r;
    }
  }
  if (rel.empty()) {
    // The scope lives as long as its sleeper; an existing one (record lost) is simply reused.
    auto shown = run({t.systemctl, "--user", "show", "-p", "ControlGroup", "--value", unit});
    if (!shown || shown->empty()) {
      KERN_TRY(run({t.systemd_run, "--user", "--scope", "-p", "Delegate=yes", "--quiet", "--unit=" + unit, "--",
                    "sleep", "infinity"},
                   true));
      for (int waited = 0; waited < kDeadlineMs; waited += 20) {
        shown = run({t.systemctl, "--user", "show", "-p", "ControlGroup", "--value", unit});
        if (shown && !shown->empty()) break;
        sleep_ms(20);
      }
    }
    if (!shown || shown->empty() || (*shown)[0] != '/')
      return fail(ErrorKind::host_unsupported, 0, "systemd did not make the delegated scope " + unit);
    rel = *shown;
    // The sleeper leaves the scope's own cgroup, which may then enable controllers.
    std::string procs;
    if (read_knob_file(AT_FDCWD, host.mount + rel + "/cgroup.procs", &procs) == 0) {
      size_t i = 0;
      while (i < procs.size()) {
        size_t e = procs.find('\n', i);
        if (e == std::string::npos) e = procs.size();
        pid_t p = static_cast<pid_t>(std::strtol(procs.substr(i, e - i).c_str(), nullptr, 10));
        if (p > 0) KERN_TRY(attach(t, unit, "/keeper", p));
        i = e + 1;
      }
    }
    (void)sys::write_file(AT_FDCWD, record, unit + "\n" + rel + "\n", 0600);
  }

  // kern itself into a leaf of the scope: from there the box cgroup is ours to clone into.
  std::string leaf = "/launch-" + std::to_string(host.pid);
  KERN_TRY(attach(t, unit, leaf, host.pid));
  if (!lists_pid(host.mount + rel + leaf + "/cgroup.procs", host.pid))
    return fail(ErrorKind::host_unsupported, 0, "systemd did not move kern into " + unit);
  // Leaves of launchers that have exited are empty: remove them (a live one refuses with EBUSY).
  if (DIR* d = ::opendir((host.mount + rel).c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (e->d_type == DT_DIR && n.rfind("launch-", 0) == 0 && "/" + n != leaf)
        ::rmdir((host.mount + rel + "/" + n).c_str());
    }
    ::closedir(d);
  }
  std::string all;
  for (const auto& c : std::vector<std::string>{"memory", "pids"}) all += (all.empty() ? "+" : " +") + c;
  for (const auto& c : extra) all += " +" + c;
  (void)sys::write_knob(AT_FDCWD, host.mount + rel + "/cgroup.subtree_control", all);
  return prepare_base(host, rel, "systemd scope " + unit, extra);
}

}  // namespace kern
