// create_container, start_container, saved_config, run_poststop (see container_create.h).
#include "runtime/bundle/container_create.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/box_handle.h"
#include "runtime/box_join.h"
#include "runtime/bundle/seccomp_agent.h"
#include "runtime/cgroup/container.h"
#include "runtime/bundle/seccomp_cache.h"
#include "runtime/bundle/oci_hooks.h"
#include "runtime/channel.h"
#include "runtime/sys/fd_passing.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern::bundle {

namespace {

constexpr const char* kHoldSocket = "start.sock";

// A unix socket path for a file in `dirfd`, short whatever --root is: sun_path holds 108 bytes,
// and engines' state roots with 64-character ids are longer than that.
sockaddr_un socket_addr(int dirfd, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", dirfd, kHoldSocket);
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + std::strlen(a.sun_path) + 1);
  return a;
}

Result<UniqueFd> open_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail_errno("open \"" + path + "\"");
  return UniqueFd(fd);
}

Result<UniqueFd> listen_hold(int dirfd, const std::string& dir) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail_errno("socket (hold)");
  UniqueFd sock(s);
  socklen_t len;
  sockaddr_un a = socket_addr(dirfd, &len);
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), len) != 0) return fail_errno("bind \"" + dir + "/" + kHoldSocket + "\"");
  if (::listen(s, 1) != 0) return fail_errno("listen \"" + dir + "/" + kHoldSocket + "\"");
  return sock;
}

std::string enforcement_json(const ContainerCgroup& cg, const std::vector<std::string>& warnings) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : cg.enforced) j[k] = knob_verdict_text(v);
  if (!warnings.empty()) j["warnings"] = warnings;
  return j.dump();
}

// Removes what a failed create made, in reverse: the cgroup (when made here), the directory.
struct CreateGuard {
  const StateDir& dir;
  std::string id;
  std::string cgroup;
  std::vector<std::string> v1_made;  // deepest last
  bool armed = true;
  ~CreateGuard() {
    if (!armed) return;
    for (auto it = v1_made.rbegin(); it != v1_made.rend(); ++it) ::rmdir(it->c_str());
    if (!cgroup.empty()) ::rmdir(cgroup.c_str());
    (void)dir.remove(id);
  }
};

// io.kern.report-fd: the created record, one line, on the fd the annotation names.
Status write_report(const std::string& value, const ContainerRecord& rec) {
  char* end = nullptr;
  long fd = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || fd < 0 || fd > 1 << 20)
    return fail(ErrorKind::config, 0, std::string("annotations.") + kReportFdAnnotation + ": \"" + value + "\" is not a file descriptor number");
  nlohmann::json line = {{"event", "created"}, {"id", rec.id}, {"pid", rec.pid}, {"cgroup", rec.cgroup},
                         {"enforcement", nlohmann::json::parse(rec.annotations.at(kEnforcementAnnotation))}};
  std::string text = line.dump() + "\n";
  if (sys::write_all_raw(static_cast<int>(fd), text.data(), text.size()) != 0)
    return fail_errno(std::string("write annotations.") + kReportFdAnnotation + " fd " + value, ErrorKind::config);
  return {};
}

// process.rlimits, set on the held process from here, with this process's privileges, as runc
// sets them from its parent: a hard limit above the current one needs CAP_SYS_RESOURCE in the
// host's user namespace, which a process inside the container's own never has. So a limit
// that cannot be had fails create, naming it; the process sets the same values again before
// its execve (allowed: not a raise), which also covers `kern oci exec`'s processes.
Status set_rlimits(pid_t pid, const std::vector<RlimitSetting>& limits) {
  for (const auto& l : limits) {
    struct rlimit64 rl = {l.soft, l.hard};
    if (::syscall(SYS_prlimit64, pid, l.resource, &rl, nullptr) == 0) continue;
    int err = errno;
    std::string what = "process.rlimits: " + l.name + " soft " + std::to_string(l.soft) + " hard " + std::to_string(l.hard);
    if (l.soft > l.hard) return fail(ErrorKind::config, err, what + ": the soft limit is above the hard one");
    Error e(ErrorKind::config, err, "prlimit " + what);
    if (err == EPERM)
      e.with_hint("a hard limit above the caller's own needs CAP_SYS_RESOURCE (the engine's ulimits, or its "
                  "default_ulimits, ask for more than this host gives it)");
    return fail(std::move(e));
  }
  return {};
}

}  // namespace

std::string hook_state(ContainerRecord r, ContainerStatus s) {
  r.annotations.erase(kEnforcementAnnotation);
  return state_json(r, s);
}

Status send_console(const std::string& path, int master) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail_errno("socket (--console-socket)");
  UniqueFd sock(s);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    return fail(ErrorKind::usage, ENAMETOOLONG, "--console-socket \"" + path + "\": path too long for a unix socket");
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return fail_errno("connect --console-socket \"" + path + "\"");
  int r = sys::send_fd_raw(s, master);
  if (r != 0) return fail(Error(ErrorKind::setup, r, "sendmsg SCM_RIGHTS --console-socket \"" + path + "\""));
  return {};
}

Status write_pid_file(const std::string& path, pid_t pid) {
  // As runc: a new file beside it, renamed over it, so a reader never sees half a pid. The
  // temporary name is created, never opened: a link or file planted there is removed (unlink
  // does not follow a link) and O_EXCL|O_NOFOLLOW refuses one planted again meanwhile. A link
  // at the path itself is refused, so an engine's pid file is never someone else's file.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return fail(Error(ErrorKind::config, 0, "--pid-file \"" + path + "\" is a symbolic link; kern does not write through one")
                    .with_hint("give the path of the file itself"));
  std::string tmp = path + ".kern-tmp";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return fail_errno("unlink \"" + tmp + "\"");
  int fd;
  do fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail_errno("open --pid-file \"" + tmp + "\"");
  UniqueFd owned(fd);
  Status w = sys::write_all(fd, std::to_string(pid), "--pid-file \"" + tmp + "\"");
  owned.reset();
  if (w && ::rename(tmp.c_str(), path.c_str()) != 0) w = fail_errno("rename --pid-file \"" + path + "\"");
  if (!w) ::unlink(tmp.c_str());
  return w;
}

std::string rfc3339_now() {
  char buf[64];
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  ::gmtime_r(&ts.tv_sec, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[96];
  std::snprintf(out, sizeof out, "%s.%09ldZ", buf, ts.tv_nsec);
  return out;
}

Status create_container(const StateDir& dir, const CreateRequest& req, UniqueFd* console, Config* created) {
  KERN_TRY(check_container_id(req.id));
  KERN_TRY_ASSIGN(LoadedBundle b, load_bundle(req.bundle, seccomp_cache_dir(dir.root())));
  bool keep_console = b.config.process->terminal && req.console_socket.empty();
  if (keep_console && (!req.foreground || !console))
    return fail(Error(ErrorKind::config, 0, "process.terminal is true but no --console-socket was given")
                    .with_hint("the engine passes --console-socket; by hand, kern oci run without --detach relays "
                               "the terminal itself, or set process.terminal to false"));
  KERN_TRY(dir.create(req.id));
  CreateGuard guard{dir, req.id, {}};
  std::string cdir = dir.container_dir(req.id);
  // The document as create read and parsed it: exec and delete must not see a later edit of the
  // bundle.
  KERN_TRY(sys::write_file(AT_FDCWD, cdir + "/config.json", b.text, 0600));

  CreateOptions opts = req.options;
  opts.initial_userns = in_initial_user_namespace();
  KERN_TRY_ASSIGN(std::unique_ptr<OciLaunch> launch, plan_container(b, req.id, opts, ::geteuid(), ::getegid()));
  KERN_TRY(open_joined_namespaces(b.config, *launch));
  // Only for a user namespace of the container's own: elsewhere the child binds by path in its
  // copy of the caller's mounts, as before (a bind then keeps its source's propagation peers,
  // which volumes shared with the host rely on).
  if (launch->plan.clone_flags & CLONE_NEWUSER) launch->bind_sources = open_bind_sources(launch->root);
  for (const auto& w : launch->warnings) log::warning(w);

  auto ann = b.config.annotations.find(kRequireLimitsAnnotation);
  bool require = ann != b.config.annotations.end() && ann->second == "true";
  KERN_TRY_ASSIGN(ContainerCgroup cg, make_container_cgroup(b.config, req.id, req.systemd_cgroup, require));
  if (cg.created) guard.cgroup = cg.dir;
  guard.v1_made = cg.v1_made;
  // A "cgroup" mount shows the container's v1 hierarchies (config_root.h).
  for (const auto& [hierarchy, v1dir] : cg.v1) {
    CgroupV1Dir h;
    h.controllers = hierarchy_controllers(hierarchy);
    h.name = hierarchy.compare(0, 5, "name=") == 0 ? hierarchy.substr(5) : hierarchy;
    h.host_dir = v1dir;
    launch->root.cgroup_v1.push_back(std::move(h));
  }
  // Without v1 directories of its own (rootless on a v1 or hybrid host), a "cgroup" mount shows
  // the creator's own directory of each v1 hierarchy, as runc's does: never the host's whole
  // tree, whose other cgroups' names are not the container's to read.
  bool cgroup_mount = std::any_of(b.config.mounts.begin(), b.config.mounts.end(),
                                  [](const Mount& m) { return m.type == "cgroup"; });
  if (cg.v1.empty() && cgroup_mount) {
    auto mi = sys::read_file(AT_FDCWD, "/proc/self/mountinfo", 4 << 20);
    auto pc = sys::read_file(AT_FDCWD, "/proc/self/cgroup", 1 << 16);
    if (mi && pc) {
      for (const auto& v : v1_hierarchies(*mi, *pc)) {
        CgroupV1Dir h;
        h.controllers = v.controllers;
        h.name = v.mount.substr(v.mount.rfind('/') + 1);
        h.host_dir = v.self == "/" ? v.mount : v.mount + v.self;
        h.bind = true;
        launch->root.cgroup_v1.push_back(std::move(h));
      }
    }
  }
  launch->root.own_cgroup_ns = (launch->plan.clone_flags & CLONE_NEWCGROUP) != 0;
  for (const auto& w : cg.warnings) log::warning(w);

  ContainerRecord rec;
  rec.id = req.id;
  rec.bundle = b.dir;
  rec.created = rfc3339_now();
  rec.cgroup = cg.dir;
  rec.cgroups_v1 = cg.v1;
  rec.annotations = b.config.annotations;
  rec.annotations[kEnforcementAnnotation] = enforcement_json(cg, launch->warnings);
  const Hooks& hooks = b.config.hooks;
  const bool listener = b.config.linux_config && b.config.linux_config->seccomp &&
                        !b.config.linux_config->seccomp->listener_path.empty();
  rec.start_needs_config = !hooks.start_container.empty() || !hooks.poststart.empty() || listener;
  rec.delete_needs_config = !hooks.poststop.empty();
  KERN_TRY(dir.write(rec));

  KERN_TRY_ASSIGN(UniqueFd dirfd, open_dir(cdir));
  KERN_TRY_ASSIGN(UniqueFd hold, listen_hold(dirfd.get(), cdir));

  // user, pid and time namespaces given by path: entered here, so box init is cloned into them
  // (a pid or time namespace applies to children; a user namespace must come before the rest).
  for (const auto& [fd, type] : launch->enter_before_clone)
    if (::setns(fd, type) != 0) return fail_errno("setns " + std::to_string(type) + " (linux.namespaces[].path)");

  StartContext ctx;
  ctx.hold_fd = hold.get();
  ctx.into_cgroup_fd = cg.fd ? cg.fd.get() : -1;
  for (const auto& [hierarchy, cdir1] : cg.v1) ctx.join_cgroup_dirs.push_back(cdir1);
  const Process& p = *b.config.process;
  if (p.terminal && (p.console_height || p.console_width)) {
    struct winsize ws {};
    ws.ws_row = static_cast<unsigned short>(p.console_height.value_or(0));
    ws.ws_col = static_cast<unsigned short>(p.console_width.value_or(0));
    ctx.winsize = ws;
  }
  // prestart and createRuntime (in kern's namespaces), then createContainer (in the container's
  // mount namespace, in the root's directory): once the container's root is mounted and before
  // its process enters it, so the bundle's host paths still resolve there (as with runc).
  ctx.before_pivot = [&](pid_t pid, int pidfd) -> Status {
    rec.pid = pid;
    rec.pid_start_time = sys::process_start_time(pid);
    KERN_TRY(dir.write(rec));
    std::string state = hook_state(rec, ContainerStatus::created);
    KERN_TRY(run_hooks(b.config.hooks.prestart, "prestart", state));
    KERN_TRY(run_hooks(b.config.hooks.create_runtime, "createRuntime", state));
    HookPlace in_mounts;
    in_mounts.container_pidfd = pidfd;
    in_mounts.cwd = launch->root.root_path;
    return run_hooks(b.config.hooks.create_container, "createContainer", state, in_mounts);
  };
  KERN_TRY_ASSIGN(BoxHandle box, BoxHandle::start(launch->plan, ctx));
  hold.reset();
  KERN_TRY(set_rlimits(box.pid(), launch->plan.exec.rlimits));

  rec.pid = box.pid();
  rec.pid_start_time = sys::process_start_time(box.pid());
  KERN_TRY(dir.write(rec));
  if (keep_console) {
    int m = ::fcntl(box.pty_master(), F_DUPFD_CLOEXEC, 3);
    if (m < 0) return fail_errno("fcntl F_DUPFD_CLOEXEC (the container's terminal)");
    console->reset(m);
  } else if (p.terminal) {
    KERN_TRY(send_console(req.console_socket, box.pty_master()));
  }
  if (!req.pid_file.empty()) KERN_TRY(write_pid_file(req.pid_file, box.pid()));
  if (auto fd = b.config.annotations.find(kReportFdAnnotation); fd != b.config.annotations.end())
    KERN_TRY(write_report(fd->second, rec));
  box.release();
  guard.armed = false;
  if (created) *created = std::move(b.config);  // b is done with
  return {};
}

Status start_container(const StateDir& dir, const std::string& id, const Config* given, ContainerRecord* started) {
  KERN_TRY_ASSIGN(ContainerRecord rec, dir.read(id));
  KERN_TRY(allowed(Verb::start, id, current_status(rec)));
  // The kept document, parsed only when this start needs it (its record says so): it is most of
  // the instructions of a start otherwise.
  std::optional<Config> kept;
  if (!given && rec.start_needs_config) {
    KERN_TRY_ASSIGN(Config c, saved_config(dir, id));
    kept = std::move(c);
  }
  static const Config kNone;
  const Config& cfg = given ? *given : kept ? *kept : kNone;
  std::string cdir = dir.container_dir(id);

  if (!cfg.hooks.start_container.empty()) {
    int pfd = static_cast<int>(::syscall(SYS_pidfd_open, rec.pid, 0));
    if (pfd < 0) return fail_errno("pidfd_open " + std::to_string(rec.pid));
    UniqueFd pidfd(pfd);
    HookPlace inside;
    inside.container_pidfd = pidfd.get();
    inside.container_pid = rec.pid;
    std::optional<CompiledSeccomp> filter;
    if (cfg.linux_config && cfg.linux_config->seccomp) {
      auto c = compile_seccomp_cached(*cfg.linux_config->seccomp, seccomp_cache_dir(dir.root()));
      if (!c) return fail(std::move(c).error().with_context("the container's linux.seccomp"));
      filter = std::move(*c);
      inside.seccomp = &filter->program;
    }
    KERN_TRY(run_hooks(cfg.hooks.start_container, "startContainer", hook_state(rec, ContainerStatus::created), inside));
  }

  KERN_TRY_ASSIGN(UniqueFd dirfd, open_dir(cdir));
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail_errno("socket (start)");
  UniqueFd conn(s);
  socklen_t len;
  sockaddr_un a = socket_addr(dirfd.get(), &len);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), len) != 0)
    return fail_errno("connect \"" + cdir + "/" + kHoldSocket + "\" (is the container's process still there?)");
  ::unlinkat(dirfd.get(), kHoldSocket, 0);
  ChannelReader reader(conn.get());
  for (;;) {
    KERN_TRY_ASSIGN(std::optional<ChannelMsg> m, reader.next());
    // Box init becomes the process (LaunchPlan::init_becomes_workload): the connection's end
    // without a failure is its execve (the connection is close-on-exec). A kill of init that
    // lands before it is not told apart: the container is stopped then, as `state` says.
    if (!m || m->type == ChannelMsgType::exec_ok) break;
    if (m->type == ChannelMsgType::setup_failed) return fail(std::move(*m->error));
    if (m->type == ChannelMsgType::seccomp_listener) {
      // The workload waits on the agent for each notified call from here on; one that cannot
      // be handed over is the container's end (its calls would fail with ENOSYS).
      UniqueFd listener = reader.take_fd();
      Status sent = listener && cfg.linux_config && cfg.linux_config->seccomp
                        ? send_to_seccomp_agent(*cfg.linux_config->seccomp, rec.pid,
                                                hook_state(rec, ContainerStatus::created), listener.get())
                        : fail(ErrorKind::internal, EPROTO, "the container's seccomp listener did not arrive");
      if (!sent) {
        int pfd = static_cast<int>(::syscall(SYS_pidfd_open, rec.pid, 0));
        if (pfd >= 0) {
          ::syscall(SYS_pidfd_send_signal, pfd, SIGKILL, nullptr, 0);
          ::close(pfd);
        }
        return fail(std::move(sent).error());
      }
      continue;
    }
    if (m->type == ChannelMsgType::step_skipped) continue;
    return fail(ErrorKind::internal, EPROTO, "container \"" + id + "\" sent an unexpected message before exec_ok");
  }
  rec.started = true;
  KERN_TRY(dir.write(rec));
  run_hooks_warning(cfg.hooks.poststart, "poststart", hook_state(rec, ContainerStatus::running));
  if (started) *started = std::move(rec);
  return {};
}

Result<Config> saved_config(const StateDir& dir, const std::string& id) {
  std::string path = dir.container_dir(id) + "/config.json";
  KERN_TRY_ASSIGN(std::string text, dir.read_entry_file(id, "config.json", 16 << 20));
  auto c = parse_config(text);
  if (!c) return fail(std::move(c).error().with_context(path));
  return std::move(c).value();
}

void run_poststop(const Config& c, const ContainerRecord& r) {
  run_hooks_warning(c.hooks.poststop, "poststop", hook_state(r, ContainerStatus::stopped));
}

}  // namespace kern::bundle
