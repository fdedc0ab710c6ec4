// The detached supervisor's watch over its box: the workload's output into the log ring and to
// the followers, the socket's clients (follow, attach, wait, kill, stop), the signals the
// supervisor gets (forwarded to box init), --timeout, and the wait between boxes of --restart. Supervisor side only (see supervisor_main.h).
#pragma once

#include <poll.h>

#include <functional>
#include <string>
#include <vector>

#include "runtime/box_handle.h"
#include "runtime/detached/box_log.h"
#include "runtime/detached/health_probe.h"
#include "runtime/detached/wire.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

struct LoopFds {
  int out = -1;        // read end of the workload's stdout pipe (-1 with a pty)
  int err = -1;        // read end of its stderr pipe (-1 with a pty)
  int stdin_sink = -1; // where attach input goes: the stdin pipe (-i) or the pty master (-it)
  int listen = -1;     // the box's socket
  int signals = -1;    // signalfd
  uint64_t timeout_ms = 0;
};

class SupervisorLoop {
 public:
  SupervisorLoop(BoxHandle& box, LogFile& log, const LoopFds& fds) : box_(&box), log_(log), fds_(fds) {}
  // Runs until box init has exited (not reaped yet). Returns whether --timeout fired.
  bool run();
  // Tells every client still connected the exit code (waiters, followers, attached) and
  // closes them.
  void finish(int exit_code);

  // --restart: between one box and the next of the same name.
  // The exit code to the waiters (kern wait returns at every exit, as docker wait does); the
  // followers and attached clients stay for the next box.
  void tell_waiters(int exit_code);
  // Serves the clients for `ms` with no box (a signal is refused: the box is restarting).
  // Returns false as soon as a stop came (kern stop, or SIGTERM/SIGINT to the supervisor).
  bool idle(uint64_t ms);
  // The next box, and its descriptors.
  void rebind(BoxHandle& box, const LoopFds& fds) {
    box_ = &box;
    fds_ = fds;
    health_restart_ = false;
  }
  // kern stop (a "stop N" request), or SIGTERM/SIGINT/SIGHUP to the supervisor: the box ends
  // and the restart policy with it.
  bool stop_requested() const { return stop_requested_; }
  // Health checks (health_probe.h): the loop runs the probes while a box runs, calls `changed`
  // when the status changes, and acts on an unhealthy box as the config's on_failure says
  // (kill: SIGKILL, the restart policy decides; restart: SIGKILL and a new box whatever the
  // policy; stop: SIGKILL and the policy ends).
  void set_health(HealthProbe* probe, std::function<void(const HealthState&)> changed) {
    health_ = probe;
    health_changed_ = std::move(changed);
  }
  // The last box was killed by --health-on-failure restart: the next one starts whatever the policy.
  bool health_restart() const { return health_restart_; }
  // kern rename (a "rename NAME" request): `rename` moves the box to NAME, or says why not.
  void set_rename(std::function<Status(const std::string&)> rename) { rename_ = std::move(rename); }

 private:
  struct Client {
    UniqueFd fd;
    std::string in;
    enum Kind { pending, follow, attach, wait } kind = pending;
  };
  void accept_client();
  void read_client(Client& c);
  void request(Client& c, const std::string& line);
  void output(int fd, LogStream stream, bool* open);
  void send(Client& c, const std::string& frame);
  void feed_input(const std::string& bytes);
  void health_event();
  void serve(const std::vector<struct pollfd>& p, size_t first_client, bool listen_ready, bool signal_ready);

  BoxHandle* box_;  // null between a box's exit and the next one's start
  LogFile& log_;
  LoopFds fds_;
  std::vector<Client> clients_;
  bool stop_requested_ = false;
  HealthProbe* health_ = nullptr;
  std::function<void(const HealthState&)> health_changed_;
  bool health_restart_ = false;
  std::function<Status(const std::string&)> rename_;
};

}  // namespace kern
