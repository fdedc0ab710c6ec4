// The two ways a kernel's supervisor runs: `kern kernel serve` (in the calling process, the
// protocol on its stdin/stdout) and `kern kernel start` (a forked, detached supervisor behind a
// unix socket). The fork's child is the supervisor process from then on.
#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "runtime/kernel/client.h"
#include "runtime/kernel/supervisor_loop.h"
#include "runtime/sys/error_codec.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

// The supervisor's own stop signals: taken from a signalfd so that they end the kernel cleanly
// (the box torn down through its handle, the socket removed) instead of killing the supervisor.
UniqueFd stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

Result<UniqueFd> listen_unix(const std::string& path) {
  KERN_TRY_ASSIGN(struct sockaddr_un sa, sys::unix_address(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno("socket AF_UNIX");
  if (::bind(fd.get(), reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0)
    return fail_errno("bind \"" + path + "\"");
  ::chmod(path.c_str(), 0600);
  if (::listen(fd.get(), 64) != 0) return fail_errno("listen \"" + path + "\"");
  return fd;
}

}  // namespace

std::string kernels_dir(const std::string& runtime_dir) { return runtime_dir + "/kernels"; }

std::string kernel_socket_path(const std::string& runtime_dir, const std::string& name) {
  return kernels_dir(runtime_dir) + "/" + name + ".sock";
}

std::string kernel_log_path(const std::string& runtime_dir, const std::string& name) {
  return kernels_dir(runtime_dir) + "/" + name + ".log";
}

Result<int> serve_kernel(const BoxSpec& spec, const KernelConfig& cfg, int in_fd, int out_fd) {
  UniqueFd sigs = stop_signals();
  Supervisor::Hooks h;
  h.diag_fd = STDERR_FILENO;
  h.signal_fd = sigs.get();
  h.on_ready = [out_fd](const json& j) {
    std::string line = object_line(j);
    (void)sys::write_all_raw(out_fd, line.data(), line.size());
  };
  Supervisor s(spec, cfg, h);
  s.add_stream_client(in_fd, out_fd);
  return s.run();
}

Status start_kernel(const BoxSpec& spec, const KernelConfig& cfg, std::string* ready) {
  KERN_TRY_ASSIGN(std::string rt, paths::runtime_dir());
  std::string dir = kernels_dir(rt);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
  std::string path = kernel_socket_path(rt, cfg.name);
  // A socket that answers is a live kernel; one that does not is left over from a killed one.
  if (auto probe = connect_kernel(cfg.name); probe)
    return fail(Error(ErrorKind::usage, 0, "a kernel named \"" + cfg.name + "\" is already running")
                    .with_hint("choose another name, or stop it with: kern kernel stop " + cfg.name));
  ::unlink(path.c_str());
  KERN_TRY_ASSIGN(UniqueFd listener, listen_unix(path));
  UniqueFd ready_w;
  KERN_TRY_ASSIGN(UniqueFd ready_r, sys::make_pipe(O_CLOEXEC, &ready_w));

  pid_t pid = ::fork();
  if (pid < 0) {
    ::unlink(path.c_str());
    return fail_errno("fork the kernel's supervisor");
  }
  if (pid == 0) {
    // The supervisor: its own session, nothing of the caller's but stderr until ready.
    ready_r.reset();
    ::setsid();
    int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
      ::close(devnull);
    }
    UniqueFd sigs = stop_signals();
    std::string log_path = kernel_log_path(rt, cfg.name);
    int rfd = ready_w.get();
    Supervisor::Hooks h;
    h.listen_fd = listener.get();
    h.diag_fd = STDERR_FILENO;
    h.signal_fd = sigs.get();
    h.on_ready = [&ready_w, rfd, log_path](const json& j) {
      std::string msg = "R" + j.dump();
      (void)sys::write_all_raw(rfd, msg.data(), msg.size());
      ready_w.reset();
      // From now on kern's own lines go to the kernel's log, and the caller's stderr is let go
      // (a caller reading it to end-of-file must not wait for the kernel to stop).
      int logfd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (logfd >= 0) {
        ::dup2(logfd, STDERR_FILENO);
        ::close(logfd);
      }
    };
    Supervisor s(spec, cfg, h);
    auto r = s.run();
    ::unlink(path.c_str());
    ::unlink(log_path.c_str());
    if (!r && ready_w) {
      std::string msg = "F" + sys::encode_error(r.error());
      (void)sys::write_all_raw(ready_w.get(), msg.data(), msg.size());
    }
    _exit(r ? 0 : 1);
  }
  listener.reset();
  ready_w.reset();
  auto text = sys::read_all(ready_r.get(), 1 << 20, "the kernel's ready pipe");
  if (!text) return fail(std::move(text).error());
  if (!text->empty() && (*text)[0] == 'R') {
    if (ready) *ready = text->substr(1);
    return {};
  }
  if (!text->empty() && (*text)[0] == 'F') {
    auto e = sys::decode_error(std::string_view(*text).substr(1));
    if (e) return fail(std::move(*e));
    return fail(std::move(e).error().with_context("the supervisor of kernel \"" + cfg.name + "\" failed to start"));
  }
  return fail(ErrorKind::setup, 0, "the supervisor of kernel \"" + cfg.name + "\" died while it was starting");
}

}  // namespace kern::kernel
