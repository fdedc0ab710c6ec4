// Detached boxes; see supervisor_main.h. start_detached runs in the `kern box -d` command; after the
// double fork, supervisor_main runs in the box's supervisor.
#include "runtime/detached/supervisor_main.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "runtime/blocked_signals.h"
#include "runtime/box_session.h"
#include "runtime/detached/events.h"
#include "runtime/detached/health_probe.h"
#include "runtime/detached/restart_policy.h"
#include "runtime/detached/supervisor_loop.h"
#include "runtime/launch_plan.h"
#include "runtime/report.h"
#include "runtime/net/private_net_plan.h"
#include "runtime/sys/error_codec.h"
#include "runtime/sys/session_child.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

// The signals a foreground box's launcher forwards (blocked_signals.h), taken from a signalfd for
// the supervisor's whole life.
UniqueFd block_signals() {
  sigset_t set = supervised_signals();
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

Result<UniqueFd> listen_box_socket(const std::string& path) {
  KERN_TRY_ASSIGN(struct sockaddr_un sa, sys::unix_address(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return fail_errno("socket AF_UNIX");
  ::unlink(path.c_str());
  if (::bind(fd.get(), reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0)
    return fail_errno("bind \"" + path + "\"");
  ::chmod(path.c_str(), 0600);
  if (::listen(fd.get(), 16) != 0) return fail_errno("listen \"" + path + "\"");
  return fd;
}

// The workload's stdio: pipes the supervisor reads (a pty replaces them with -t: box init makes
// it), stdin /dev/null unless -i.
struct BoxStdio {
  UniqueFd in_r, in_w, out_r, out_w, err_r, err_w;
};

Result<BoxStdio> make_stdio(const BoxSpec& spec) {
  BoxStdio s;
  if (spec.tty) return s;
  // O_NONBLOCK belongs to the open file description: set on the supervisor's ends only, so that
  // the workload's writes (and reads) block as on any pipe.
  KERN_TRY_ASSIGN(s.out_r, sys::make_pipe(O_CLOEXEC, &s.out_w));
  KERN_TRY_ASSIGN(s.err_r, sys::make_pipe(O_CLOEXEC, &s.err_w));
  ::fcntl(s.out_r.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(s.err_r.get(), F_SETFL, O_NONBLOCK);
  if (spec.interactive) {
    KERN_TRY_ASSIGN(s.in_r, sys::make_pipe(O_CLOEXEC, &s.in_w));
    ::fcntl(s.in_w.get(), F_SETFL, O_NONBLOCK);
  }
  return s;
}

void put_stdio(int fd0, int fd1, int fd2) {
  ::dup2(fd0, STDIN_FILENO);
  ::dup2(fd1, STDOUT_FILENO);
  ::dup2(fd2, STDERR_FILENO);
}

struct SupervisorArgs {
  const BoxSpec* spec;
  const DetachedOptions* opts;
  BoxRegistration* reg;
  std::string runtime_dir;
  int ready_fd;
  TimingPage* timing;
};

// The descriptors the caller let kern inherit (everything not close-on-exec, kern's own are all
// close-on-exec) are not the supervisor's to keep for the box's life: a caller waiting for the
// end of a pipe it passed must not wait for the box. The started and report fds stay.
void close_inherited(const BoxSpec& spec, int ready_fd) {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return;
  std::vector<int> drop;
  while (struct dirent* e = ::readdir(d)) {
    int fd = std::atoi(e->d_name);
    if (fd <= 2 || fd == ::dirfd(d) || fd == ready_fd || fd == spec.started_fd || fd == spec.report_fd) continue;
    bool passed = false;
    for (const auto& pf : spec.pass_fds) passed |= pf.first == fd;
    int flags = ::fcntl(fd, F_GETFD);
    if (!passed && flags >= 0 && !(flags & FD_CLOEXEC)) drop.push_back(fd);
  }
  ::closedir(d);
  for (int fd : drop) ::close(fd);
}

void send_ready(int fd, const std::string& msg) { (void)sys::write_all_raw(fd, msg.data(), msg.size()); }

// This kern, for the health probes' kern exec: the supervisor's own binary.
std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "/proc/self/exe";
}

// The report fd's line for a health status change (kern-box(1), REPORT FD).
std::string health_record(const std::string& name, const HealthState& st) {
  nlohmann::json j = {{"event", "health"}, {"name", name}, {"status", st.status}, {"failing_streak", st.failing_streak}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One box of the service (the first, or a restart's): the supervisor's ends of its stdio, and
// its session (box_session.h).
struct OneBox {
  BoxStdio stdio;
  std::unique_ptr<BoxSession> session;
  BoxHandle& box() { return session->box(); }
};

// Starts a box of `spec`, its stdio pipes made here (the box is cloned with them as 0, 1, 2; the
// supervisor's own are /dev/null afterwards, stderr `err_fd`). Nothing of it is left on failure.
Result<std::unique_ptr<OneBox>> start_one(const BoxSpec& spec, const SupervisorArgs& a, const std::string& scratch,
                                          TimingPage* timing, int devnull, int err_fd) {
  auto one = std::make_unique<OneBox>();
  KERN_TRY_ASSIGN(one->stdio, make_stdio(spec));
  BoxStdio& io = one->stdio;
  put_stdio(io.in_r ? io.in_r.get() : devnull, io.out_w ? io.out_w.get() : devnull, io.err_w ? io.err_w.get() : devnull);
  io.in_r.reset();
  io.out_w.reset();
  io.err_w.reset();
  SessionStart start{a.runtime_dir, scratch, timing, std::nullopt};
  // -dt: no caller's terminal to copy the size from; the usual 80x24 rather than 0x0.
  if (spec.tty) start.winsize = winsize{24, 80, 0, 0};
  auto started = BoxSession::start(spec, start);
  put_stdio(devnull, devnull, err_fd);
  if (!started) return fail(std::move(started).error());
  one->session = std::move(*started);
  return one;
}

LoopFds loop_fds(const BoxSpec& spec, OneBox& one, int listen, int signals) {
  LoopFds fds;
  fds.out = one.stdio.out_r ? one.stdio.out_r.get() : -1;
  fds.err = one.stdio.err_r ? one.stdio.err_r.get() : -1;
  fds.stdin_sink = one.stdio.in_w ? one.stdio.in_w.get() : (spec.interactive ? one.box().pty_master() : -1);
  fds.listen = listen;
  fds.signals = signals;
  fds.timeout_ms = spec.timeout_ms;
  return fds;
}

// A detached box keeps its upper on the host (<runtime>/kept/NAME) until kern rm: kern diff and
// kern commit read it, and under a restart policy the next box finds what this one wrote. With
// --uid-range its files would belong to ids kern rm could not remove: its upper stays on a tmpfs
// of the box (kern diff and commit refuse such a box), and each restart starts from the image
// (said once).
std::string scratch_for(BoxSpec& spec, const SupervisorArgs& a) {
  if (spec.uid_range) {
    if (a.opts->restart.mode != RestartMode::no)
      log::warning("--restart with --uid-range: each new box starts from the image (what a box writes is not kept)");
    return a.reg->scratch_dir();
  }
  std::string dir = detached_kept_dir(a.runtime_dir, spec.name);
  ::mkdir((a.runtime_dir + "/kept").c_str(), 0700);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    log::warning("--restart: mkdir \"" + dir + "\": " + std::strerror(errno) + ": each new box starts from the image");
    return a.reg->scratch_dir();
  }
  spec.upper_on_host = true;
  return dir;
}

// The box's supervisor, from the double fork to its _exit.
[[noreturn]] void supervisor_main(const SupervisorArgs& a) {
  BoxSpec spec = *a.spec;
  close_inherited(spec, a.ready_fd);
  UniqueFd sigs = block_signals();
  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  UniqueFd caller_err(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
  std::string log_path = detached_log_path(a.runtime_dir, spec.name);
  std::string sock_path = detached_socket_path(a.runtime_dir, spec.name);
  auto give_up = [&](Error e) {
    ::unlink(sock_path.c_str());
    ::unlink(log_path.c_str());
    a.reg->release();
    send_ready(a.ready_fd, "F" + sys::encode_error(e));
    _exit(1);
  };
  log::set_output_fd(caller_err.get());
  if (!sigs || !devnull || !caller_err) give_up(Error(ErrorKind::setup, errno, "set up the box's supervisor"));
  ::unlink(log_path.c_str());  // left by a box of this name whose record was reaped
  auto log = LogFile::create(log_path, a.opts->log_size);
  if (!log) give_up(std::move(log).error());
  auto listener = listen_box_socket(sock_path);
  if (!listener) give_up(std::move(listener).error());
  std::string scratch = scratch_for(spec, a);

  auto first = start_one(spec, a, scratch, a.timing, devnull.get(), caller_err.get());
  if (!first) {
    // A box that never started leaves no upper layer behind.
    if (spec.upper_on_host) (void)sys::remove_tree(AT_FDCWD, scratch);
    give_up(std::move(first).error());
  }
  std::unique_ptr<OneBox> one = std::move(*first);
  // Everything the box uses is open: the caller's working directory is not held any longer
  // (it could not be unmounted while a box runs).
  (void)!::chdir("/");

  BoxRecord rec = one->session->started_record();
  rec.detached = true;
  rec.auto_remove = a.opts->auto_remove;
  rec.restart_policy = restart_policy_name(a.opts->restart);
  (void)a.reg->write(rec);
  Enforcement enf = one->session->announce_started(a.timing);
  rec.detail = detached_detail(spec, enf, *a.opts);
  // A box with a health check is "starting" in its record before the caller is told it runs, as
  // docker inspect has it right after run -d (it was written after, and an inspect could see none).
  if (a.opts->health.enabled()) rec.health = health_json(HealthState{});
  (void)a.reg->write(rec);
  if (spec.started_fd >= 0) ::close(spec.started_fd);  // its two bytes are written
  spec.started_fd = -1;                                 // the later boxes have no caller
  append_event(a.runtime_dir, "start", spec.name);
  send_ready(a.ready_fd, "R");
  ::close(a.ready_fd);
  // From here nothing of the caller's is held but the report fd: a caller reading our stderr
  // to its end must not wait for the box.
  ::dup2(devnull.get(), STDERR_FILENO);
  log::set_output_fd(STDERR_FILENO);
  caller_err.reset();

  SupervisorLoop loop(one->box(), *log, loop_fds(spec, *one, listener->get(), sigs.get()));
  std::optional<HealthProbe> health;
  if (a.opts->health.enabled()) {
    health.emplace(a.opts->health, spec.name, self_exe());  // "starting": the record says so already
    loop.set_health(&*health, [&](const HealthState& st) {
      rec.health = health_json(st);
      (void)a.reg->write(rec);
      if (spec.report_fd >= 0) write_report_line(spec.report_fd, health_record(spec.name, st));
      append_event(a.runtime_dir, "health_status", spec.name, "\"status\":" + nlohmann::json(st.status).dump());
    });
    health->box_started();
  }
  // kern rename: the record is claimed under the new name first (a name in use is refused with
  // nothing changed), then the files named after the box follow it, and the running box's
  // session (its lockdown record). The box's cgroup keeps the name it was made with.
  loop.set_rename([&](const std::string& to) -> Status {
    if (!valid_box_name(to)) return fail(ErrorKind::usage, 0, "invalid box name \"" + log::sanitize(to) + "\"");
    const std::string from = spec.name;
    BoxRecord moved = rec;
    moved.name = to;
    KERN_TRY(a.reg->move_to(a.runtime_dir, to, moved));
    rec = moved;
    spec.name = to;
    if (auto r = rename_detached_files(a.runtime_dir, from, to, true); !r)
      log->append(LogStream::err, wall_ns(), "kern: warning: rename: " + r.error().what() + "\n");
    log_path = detached_log_path(a.runtime_dir, to);
    sock_path = detached_socket_path(a.runtime_dir, to);
    if (spec.upper_on_host) scratch = detached_kept_dir(a.runtime_dir, to);
    if (one) {
      if (auto r = one->session->rename(a.runtime_dir); !r)
        log->append(LogStream::err, wall_ns(), "kern: warning: rename: " + r.error().what() + "\n");
    }
    if (health) health->rename(to);
    append_event(a.runtime_dir, "rename", to, "\"old_name\":" + nlohmann::json(from).dump());
    return {};
  });
  unsigned quick_exits = 0;
  BoxExit exit{};
  for (;;) {
    uint64_t started_ns = monotonic_ns();
    bool timed_out = loop.run();
    if (health) health->box_gone();
    SessionEnd end = one->session->end(timed_out, true);
    exit = end.exit;
    if (end.info.events.valid && end.info.events.oom_kill > 0) append_event(a.runtime_dir, "oom", spec.name);
    append_event(a.runtime_dir, "die", spec.name, "\"exit_code\":" + std::to_string(exit.exit_code));
    one->session->announce_end(end);
    if (std::string tally = one->session->audit_tally_line(); !tally.empty()) log->append(LogStream::err, wall_ns(), tally);
    one.reset();
    if (spec.report_fd >= 0) ::close(spec.report_fd);  // it tells of the first box only: its reader has
    spec.report_fd = -1;                                // the record and sees its end
    bool again = (loop.health_restart() && !loop.stop_requested()) ||
                 restart_wanted(a.opts->restart, exit.exit_code, rec.restarts, loop.stop_requested() || timed_out);
    if (!again) break;
    // The next box, after the back-off; kern stop (or SIGTERM) during the wait ends the policy.
    loop.tell_waiters(exit.exit_code);
    quick_exits = monotonic_ns() - started_ns >= kRestartResetMs * 1000000 ? 1 : quick_exits + 1;
    rec.state = "restarting";
    rec.exit_code = exit.exit_code;
    (void)a.reg->write(rec);
    bool ended = false;
    for (;;) {
      if (!loop.idle(restart_delay_ms(quick_exits))) {
        ended = true;
        break;
      }
      ++rec.restarts;
      append_event(a.runtime_dir, "restart", spec.name, "\"restart_count\":" + std::to_string(rec.restarts));
      auto next = start_one(spec, a, scratch, nullptr, devnull.get(), STDERR_FILENO);
      if (next) {
        one = std::move(*next);
        break;
      }
      // Said in the box's log, and answered like an exit of 125, the back-off growing.
      std::string line = "kern: error: restart " + std::to_string(rec.restarts) + ": " + next.error().what() + "\n";
      log->append(LogStream::err, wall_ns(), line);
      exit = BoxExit{125, 0};
      if (!restart_wanted(a.opts->restart, exit.exit_code, rec.restarts, loop.stop_requested())) {
        ended = true;
        break;
      }
      ++quick_exits;
    }
    if (ended) break;
    append_event(a.runtime_dir, "start", spec.name);
    rec.state = "running";
    rec.init_pid = one->box().pid();
    rec.cgroup = one->box().cgroup() ? one->box().cgroup()->path() : "";
    rec.started_unix = ::time(nullptr);
    (void)a.reg->write(rec);
    loop.rebind(one->box(), loop_fds(spec, *one, listener->get(), sigs.get()));
    if (health) {
      health->box_started();
      rec.health = health_json(health->state());
      (void)a.reg->write(rec);
    }
  }

  if (loop.stop_requested()) append_event(a.runtime_dir, "stop", spec.name);
  // The socket goes first: a client that connects from now on reads the record instead.
  listener->reset();
  ::unlink(sock_path.c_str());
  if (a.opts->auto_remove) {
    ::unlink(log_path.c_str());
    // --rm: what the box wrote goes with its record (kept on the host for kern diff and commit).
    if (spec.upper_on_host) (void)sys::remove_tree(AT_FDCWD, scratch);
    a.reg->release();
  } else {
    rec.state = "exited";
    rec.exit_code = exit.exit_code;
    rec.exited_unix = ::time(nullptr);
    (void)a.reg->keep_exited(rec);
  }
  loop.finish(exit.exit_code);
  _exit(0);
}

}  // namespace

std::string detached_detail(const BoxSpec& spec, const Enforcement& enf, const DetachedOptions& opts) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {
      {"argv", spec.argv},
      {"hostname", spec.hostname},
      {"cwd", spec.cwd},
      {"uid", spec.uid},
      {"gid", spec.gid},
      {"tty", spec.tty},
      {"interactive", spec.interactive},
      {"read_only", spec.read_only},
      {"net", net::net_mode_name(spec.net)},
      {"seccomp", spec.seccomp == SeccompMode::allowlist ? "allowlist" : "denylist"},
      {"timeout_ms", spec.timeout_ms},
      {"log_size", opts.log_size},
      {"create_argv", opts.create_argv},
      {"kern", opts.kern_path},
      {"restart_policy", restart_policy_name(opts.restart)},
      {"health_cmd", opts.health.test},
      {"limits", {{"memory_max", opt(spec.limits.memory_max)}, {"pids_max", opt(spec.limits.pids_max)},
                  {"cpus", opt(spec.limits.cpus)}}},
      {"enforcement",
       {{"memory", verdict_name(enf.memory)}, {"pids", verdict_name(enf.pids)}, {"cpu", verdict_name(enf.cpu)},
        {"cpuset", verdict_name(enf.cpuset)}, {"io", verdict_name(enf.io)}, {"devices", verdict_name(enf.devices)},
        {"memory_max", opt(enf.memory_max)}, {"pids_max", opt(enf.pids_max)}}},
  };
  // Docker's Mounts: the -v binds and the named volumes, as kern inspect shows them.
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& b : spec.binds) {
    if (b.ephemeral || b.create_missing) continue;  // a vdisk's own directory
    nlohmann::json m = {{"Type", b.volume.empty() ? "bind" : "volume"}};
    if (!b.volume.empty()) m["Name"] = b.volume;
    m["Source"] = b.source;
    m["Destination"] = b.dest;
    if (!b.volume.empty()) m["Driver"] = "local";
    m["RW"] = !b.read_only;
    mounts.push_back(std::move(m));
  }
  j["mounts"] = std::move(mounts);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status start_detached(const BoxSpec& spec, const DetachedOptions& opts, TimingPage* timing) {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  KERN_TRY_ASSIGN(BoxRegistration reg, BoxRegistration::claim(rt, spec.name));
  std::string dir = detached_dir(rt);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
  Status st = sys::start_session_child(
      [&](int ready) {
        SupervisorArgs a{&spec, &opts, &reg, rt, ready, timing};
        supervisor_main(a);
      },
      "the supervisor of box \"" + spec.name + "\" ended before the box started");
  // The supervisor holds the record (the same open file description, with its owner lock).
  reg.abandon();
  return st;
}

}  // namespace kern
