// A pod's supervisor and holder; see pod_holder.h.
#include "runtime/pod/pod_holder.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <memory>

#include "runtime/box_announce.h"
#include "runtime/net/private_net.h"
#include "runtime/net/private_net_plan.h"
#include "runtime/netns_helper.h"
#include "runtime/sys/close_fds.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/session_child.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/unique_fd.h"
#include "runtime/userns.h"

namespace kern::pod {
namespace {

constexpr unsigned long long kHolderFlags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

// What the holder says once it stands: "R", or "E" and the errno of the step it names.
void holder_say(int fd, char what, int err, const char* step) {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "%c%d %s", what, err, step);
  if (n > 0) (void)!::write(fd, buf, static_cast<size_t>(n));
}

// The holder: brings its loopback up, names its uts namespace after the pod, gives up every
// capability (what joins it needs none of the holder's: the caller owns the user namespace) and
// waits to be killed. Runs right after clone, in a copy of a single-threaded supervisor.
[[noreturn]] void holder_main(int go, int up, pid_t parent, const std::string& name) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) _exit(1);
  int keep[] = {go, up};
  sys::close_fds_except_raw(keep, 2);
  char g = 0;
  if (::read(go, &g, 1) != 1 || g != 'G') _exit(1);
  if (int r = bring_loopback_up(); r != 0) {
    holder_say(up, 'E', r, "ioctl SIOCSIFFLAGS lo (the pod's network namespace)");
    _exit(1);
  }
  if (::sethostname(name.data(), name.size()) != 0) {
    holder_say(up, 'E', errno, "sethostname (the pod's uts namespace)");
    _exit(1);
  }
  for (int c = 0; c <= CAP_LAST_CAP; ++c) ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (::syscall(SYS_capset, &hdr, data) != 0) {
    holder_say(up, 'E', errno, "capset (the pod's holder)");
    _exit(1);
  }
  holder_say(up, 'R', 0, "");
  ::close(up);
  ::close(go);
  for (;;) ::pause();
}

struct Holder {
  pid_t pid = -1;
  UniqueFd pidfd;
};

Result<Holder> clone_holder(const std::string& name, bool uid_range) {
  UniqueFd go_w, up_w;
  KERN_TRY_ASSIGN(UniqueFd go_r, sys::make_pipe(O_CLOEXEC, &go_w));
  KERN_TRY_ASSIGN(UniqueFd up_r, sys::make_pipe(O_CLOEXEC, &up_w));
  int pidfd = -1;
  struct clone_args args;
  std::memset(&args, 0, sizeof args);
  args.flags = kHolderFlags | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  pid_t parent = ::getpid();
  pid_t pid = static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
  if (pid < 0) return fail_errno("clone3 CLONE_NEWUSER|CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS (the pod's holder)");
  if (pid == 0) holder_main(go_r.get(), up_w.get(), parent, name);
  Holder h{pid, UniqueFd(pidfd)};
  go_r.reset();
  up_w.reset();
  auto bad = [&](Error e) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return fail(std::move(e));
  };
  if (auto st = write_id_maps(pid, ::getuid(), ::getgid(), uid_range); !st) return bad(std::move(st).error());
  if (::write(go_w.get(), "G", 1) != 1) return bad(Error(ErrorKind::setup, errno, "write (the pod's holder)"));
  go_w.reset();
  auto said = sys::read_all(up_r.get(), 4096, "the pod's holder");
  if (!said) return bad(std::move(said).error());
  if (said->empty()) return bad(Error(ErrorKind::setup, 0, "the pod's holder ended before it stood"));
  if ((*said)[0] != 'R') {
    int err = std::atoi(said->c_str() + 1);
    size_t sp = said->find(' ');
    return bad(Error(ErrorKind::setup, err, sp == std::string::npos ? *said : said->substr(sp + 1)));
  }
  return h;
}

[[noreturn]] void supervisor_main(const std::string& dir, PodRecord rec, const BoxSpec& net, int ready) {
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
  }
  (void)!::chdir("/");
  std::string lock_path = dir + "/lock";
  int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    sys::say_failed(ready, Error(ErrorKind::usage, errno, std::string("the ") + kind_word(rec.kind) + " \"" + rec.name +
                                                         "\" is running already (flock \"" + lock_path + "\")"));
    _exit(1);
  }
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  int sfd = ::signalfd(-1, &set, SFD_CLOEXEC);

  auto holder = clone_holder(rec.name, rec.uid_range);
  if (!holder) {
    sys::say_failed(ready, holder.error());
    _exit(1);
  }
  std::unique_ptr<net::PrivateNetwork> pasta;
  auto give_up = [&](const Error& e) {
    ::kill(holder->pid, SIGKILL);
    ::waitpid(holder->pid, nullptr, 0);
    if (pasta) pasta->stop();
    sys::say_failed(ready, e);
    _exit(1);
  };
  std::string hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  if (net.net == NetMode::private_net) {
    auto started = net::PrivateNetwork::start(net, holder->pidfd.get());
    if (!started) give_up(started.error());
    pasta = std::move(*started);
    hosts = net::hosts_text(net.private_net, rec.kind == Kind::pod ? rec.name : "");
    if (auto st = sys::write_file(AT_FDCWD, dir + "/resolv.conf", net::resolv_conf_text(net.private_net), 0644); !st)
      give_up(st.error());
    rec.ports.clear();
    for (const auto& p : net.private_net.publish) rec.ports.push_back(published_port_text(p));
  } else if (rec.kind == Kind::pod) {
    hosts += "127.0.0.1\t" + rec.name + "\n";
  }
  if (auto st = write_hosts_base(dir, hosts); !st) give_up(st.error());
  if (auto st = sys::write_file(AT_FDCWD, dir + "/hostname", rec.name + "\n", 0644); !st) give_up(st.error());
  rec.supervisor_pid = ::getpid();
  rec.holder_pid = holder->pid;
  rec.holder_start = sys::process_start_time(holder->pid);
  rec.state = "running";
  if (auto st = write_pod(dir, rec); !st) give_up(st.error());
  (void)!::write(ready, "R", 1);
  ::close(ready);

  // Until kern pod stop (SIGTERM), or the holder's end.
  struct pollfd p[2] = {{sfd, POLLIN, 0}, {holder->pidfd.get(), POLLIN, 0}};
  for (;;) {
    int n = ::poll(p, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (p[0].revents | p[1].revents) != 0) break;
  }
  ::kill(holder->pid, SIGKILL);
  while (::waitpid(holder->pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (pasta) pasta->stop();
  rec.state = "stopped";
  rec.holder_pid = 0;
  rec.supervisor_pid = 0;
  (void)write_pod(dir, rec);
  _exit(0);
}

}  // namespace

Status start_pod(const std::string& dir, PodRecord rec, const BoxSpec& net) {
  std::string ended = std::string("the supervisor of ") + kind_word(rec.kind) + " \"" + rec.name +
                      "\" ended before its namespaces stood";
  return sys::start_session_child([&](int ready) { supervisor_main(dir, std::move(rec), net, ready); }, ended);
}

Status stop_pod(const std::string& dir, const PodRecord& rec, unsigned timeout_s) {
  if (!pod_running(dir) || rec.supervisor_pid <= 0) return {};
  ::kill(rec.supervisor_pid, SIGTERM);
  timespec start{};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  bool killed = false;
  while (pod_running(dir)) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if (!killed && now.tv_sec - start.tv_sec >= static_cast<time_t>(timeout_s)) {
      ::kill(rec.supervisor_pid, SIGKILL);
      killed = true;
    }
    if (now.tv_sec - start.tv_sec > static_cast<time_t>(timeout_s) + 5)
      return fail(ErrorKind::setup, ETIMEDOUT, std::string("the ") + kind_word(rec.kind) + " \"" + rec.name +
                                                   "\" did not stop (its supervisor, pid " +
                                                   std::to_string(rec.supervisor_pid) + ", still holds its lock)");
    ::usleep(10000);
  }
  return {};
}

}  // namespace kern::pod
