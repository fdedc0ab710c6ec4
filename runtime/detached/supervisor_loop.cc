// The detached supervisor's loop; see supervisor_loop.h. Supervisor side only.
#include "runtime/detached/supervisor_loop.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "runtime/box_timeout.h"

namespace kern {
namespace {

constexpr size_t kMaxClients = 32;
constexpr size_t kMaxRequestLine = 256;

}  // namespace

void SupervisorLoop::send(Client& c, const std::string& frame) {
  if (!c.fd) return;
  // A client that does not keep up is let go rather than stalling the box's output: the log
  // ring keeps everything it missed.
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(c.fd.get(), frame.data() + done, frame.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      c.fd.reset();
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void SupervisorLoop::feed_input(const std::string& bytes) {
  if (fds_.stdin_sink < 0 || bytes.empty()) return;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fds_.stdin_sink, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full pipe or a closed one: the input is dropped
    done += static_cast<size_t>(n);
  }
}

void SupervisorLoop::accept_client() {
  UniqueFd fd(::accept4(fds_.listen, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd) return;
  struct ucred cr;
  socklen_t len = sizeof cr;
  // The socket's directory is 0700; the peer's uid is checked anyway, so that a descriptor
  // passed to another user's process is still refused.
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.uid != ::getuid()) return;
  if (clients_.size() >= kMaxClients) {
    Client tmp{std::move(fd), {}, Client::pending};
    send(tmp, encode_frame(WireType::error, wall_ns(), "too many clients connected to this box"));
    return;
  }
  // Room for bursts of output to a follower that reads a little late.
  int sndbuf = 1 << 20;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  clients_.push_back(Client{std::move(fd), {}, Client::pending});
}

void SupervisorLoop::request(Client& c, const std::string& line) {
  if (line == "follow" || line == "attach") {
    c.kind = line == "follow" ? Client::follow : Client::attach;
    send(c, encode_frame(WireType::sync, wall_ns(), "", log_.next_seq()));
  } else if (line == "wait") {
    c.kind = Client::wait;
  } else if (line.rfind("kill ", 0) == 0 || line.rfind("stop ", 0) == 0) {
    // "stop N": kern stop's signal, which also ends a restart policy.
    bool stop = line[0] == 's';
    char* end = nullptr;
    long sig = std::strtol(line.c_str() + 5, &end, 10);
    bool valid = end && *end == '\0' && sig > 0 && sig < NSIG;
    if (valid && stop) stop_requested_ = true;
    int err = !valid ? EINVAL : box_ != nullptr ? box_->signal(static_cast<int>(sig)) : (stop ? 0 : ESRCH);
    std::string why = err == ESRCH ? "the box is restarting" : std::strerror(err);
    send(c, err == 0 ? encode_frame(WireType::sync, wall_ns(), "0")
                     : encode_frame(WireType::error, wall_ns(), std::string(stop ? "stop: " : "kill: ") + why));
    c.fd.reset();
  } else if (line.rfind("rename ", 0) == 0 && rename_) {
    auto r = rename_(line.substr(7));
    send(c, r ? encode_frame(WireType::sync, wall_ns(), "0") : encode_frame(WireType::error, wall_ns(), r.error().what()));
    c.fd.reset();
  } else {
    send(c, encode_frame(WireType::error, wall_ns(), "unknown request"));
    c.fd.reset();
  }
}

void SupervisorLoop::read_client(Client& c) {
  char buf[16384];
  ssize_t n = ::read(c.fd.get(), buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    c.fd.reset();
    return;
  }
  if (c.kind == Client::attach) {
    feed_input(std::string(buf, static_cast<size_t>(n)));
    return;
  }
  if (c.kind != Client::pending) return;  // followers and waiters send nothing more
  c.in.append(buf, static_cast<size_t>(n));
  size_t nl = c.in.find('\n');
  if (nl == std::string::npos) {
    if (c.in.size() > kMaxRequestLine) c.fd.reset();
    return;
  }
  std::string line = c.in.substr(0, nl), rest = c.in.substr(nl + 1);
  c.in.clear();
  request(c, line);
  if (c.fd && c.kind == Client::attach) feed_input(rest);
}

void SupervisorLoop::output(int fd, LogStream stream, bool* open) {
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    *open = false;
    return;
  }
  uint64_t now = wall_ns();
  std::string_view data(buf, static_cast<size_t>(n));
  log_.append(stream, now, data);
  std::string frame;
  for (auto& c : clients_) {
    if (c.kind != Client::follow && c.kind != Client::attach) continue;
    if (frame.empty())
      frame = encode_frame(stream == LogStream::out ? WireType::out : WireType::err, now, data, log_.next_seq());
    send(c, frame);
  }
}

bool SupervisorLoop::run() {
  // Without a timerfd the box runs with no --timeout: said in its log, not a reason to kill it.
  auto clock = TimeoutClock::start(fds_.timeout_ms);
  if (!clock) log_.append(LogStream::err, wall_ns(), "kern: warning: --timeout not applied: " + clock.error().what() + "\n");
  TimeoutClock timeout = clock ? std::move(*clock) : TimeoutClock();
  const int pty = box_->pty_master();
  bool out_open = fds_.out >= 0, err_open = fds_.err >= 0, pty_open = pty >= 0;
  for (;;) {
    std::vector<struct pollfd> p;
    p.push_back({box_->pidfd(), POLLIN, 0});
    p.push_back({fds_.signals, POLLIN, 0});
    p.push_back({fds_.listen, POLLIN, 0});
    p.push_back({timeout.fd(), POLLIN, 0});
    p.push_back({out_open ? fds_.out : -1, POLLIN, 0});
    p.push_back({err_open ? fds_.err : -1, POLLIN, 0});
    p.push_back({pty_open ? pty : -1, POLLIN, 0});
    const size_t first_health = p.size();
    if (health_ != nullptr)
      for (int fd : health_->fds()) p.push_back({fd, POLLIN, 0});
    const size_t first_client = p.size();
    for (auto& c : clients_) p.push_back({c.fd.get(), POLLIN, 0});
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return timeout.timed_out();
    }
    bool probe_ready = false;
    for (size_t i = first_health; i < first_client; ++i) probe_ready |= p[i].fd >= 0 && p[i].revents != 0;
    if (probe_ready && health_->on_ready()) health_event();
    auto ready = [&](size_t i) { return p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)); };
    if (ready(4)) output(fds_.out, LogStream::out, &out_open);
    if (ready(5)) output(fds_.err, LogStream::err, &err_open);
    if (ready(6)) output(pty, LogStream::out, &pty_open);
    serve(p, first_client, ready(2), ready(1));
    if (ready(3)) timeout.fired([this](int sig) { (void)box_->signal(sig); });
    if (p[0].revents & POLLIN) {
      // Box init has exited and the box's processes with it: what they wrote last is drained.
      for (int round = 0; round < 1024 && (out_open || err_open || pty_open); ++round) {
        struct pollfd q[3] = {{out_open ? fds_.out : -1, POLLIN, 0},
                              {err_open ? fds_.err : -1, POLLIN, 0},
                              {pty_open ? pty : -1, POLLIN, 0}};
        if (::poll(q, 3, 0) <= 0) break;
        if (q[0].revents) output(fds_.out, LogStream::out, &out_open);
        if (q[1].revents) output(fds_.err, LogStream::err, &err_open);
        if (q[2].revents) output(pty, LogStream::out, &pty_open);
      }
      return timeout.timed_out();
    }
  }
}

// The clients' requests, a new client, a signal to the supervisor: forwarded to box init when a
// box runs; SIGTERM, SIGINT and SIGHUP also end a restart policy.
void SupervisorLoop::serve(const std::vector<struct pollfd>& p, size_t first_client, bool listen_ready,
                           bool signal_ready) {
  for (size_t i = first_client; i < p.size(); ++i)
    if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && clients_[i - first_client].fd)
      read_client(clients_[i - first_client]);
  std::erase_if(clients_, [](const Client& c) { return !c.fd; });
  if (listen_ready) accept_client();
  if (!signal_ready) return;
  struct signalfd_siginfo si;
  if (::read(fds_.signals, &si, sizeof si) != sizeof si || si.ssi_signo == SIGCHLD) return;
  if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP) stop_requested_ = true;
  if (box_ != nullptr) (void)box_->signal(static_cast<int>(si.ssi_signo));
}

void SupervisorLoop::health_event() {
  const HealthState& st = health_->state();
  if (health_changed_) health_changed_(st);
  if (st.status != "unhealthy" || box_ == nullptr) return;
  switch (health_->config().on_failure) {
    case HealthAction::none: return;
    case HealthAction::kill: break;
    case HealthAction::restart: health_restart_ = true; break;
    case HealthAction::stop: stop_requested_ = true; break;
  }
  (void)box_->signal(SIGKILL);
}

void SupervisorLoop::tell_waiters(int exit_code) {
  std::string frame = encode_frame(WireType::exit, wall_ns(), std::to_string(exit_code));
  for (auto& c : clients_) {
    if (c.kind != Client::wait) continue;
    send(c, frame);
    c.fd.reset();
  }
  std::erase_if(clients_, [](const Client& c) { return !c.fd; });
}

bool SupervisorLoop::idle(uint64_t ms) {
  box_ = nullptr;
  fds_.out = fds_.err = fds_.stdin_sink = -1;  // the last box's, closed: attach input is dropped
  UniqueFd timer(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!timer) return !stop_requested_;
  arm_timer(timer.get(), ms);
  while (!stop_requested_) {
    std::vector<struct pollfd> p;
    p.push_back({timer.get(), POLLIN, 0});
    p.push_back({fds_.signals, POLLIN, 0});
    p.push_back({fds_.listen, POLLIN, 0});
    const size_t first_client = p.size();
    for (auto& c : clients_) p.push_back({c.fd.get(), POLLIN, 0});
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return !stop_requested_;
    }
    auto ready = [&](size_t i) { return p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)); };
    serve(p, first_client, ready(2), ready(1));
    if (ready(0)) return !stop_requested_;
  }
  return false;
}

void SupervisorLoop::finish(int exit_code) {
  std::string frame = encode_frame(WireType::exit, wall_ns(), std::to_string(exit_code));
  for (auto& c : clients_) {
    if (c.kind == Client::pending) continue;
    // The last frame must arrive: the client is given up to 2 s to take it.
    size_t done = 0;
    while (c.fd && done < frame.size()) {
      struct pollfd q = {c.fd.get(), POLLOUT, 0};
      if (::poll(&q, 1, 2000) <= 0) break;
      ssize_t n = ::send(c.fd.get(), frame.data() + done, frame.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  clients_.clear();
}

}  // namespace kern
