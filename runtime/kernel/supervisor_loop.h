// The supervisor's poll loop (internal to runtime/kernel/). Supervisor process only. It does the
// I/O and drives the cell state machine (cell_machine.h), which decides. supervisor_loop.cc holds the
// loop and the cells' I/O, supervisor_box.cc the box's start, readiness and exit,
// supervisor_clients.cc the client side (requests, answers), supervisor_main.cc the two ways of running it
// (serve, start).
#pragma once

#include <sys/types.h>

#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/kernel/box_launch.h"
#include "runtime/kernel/cell_machine.h"
#include "runtime/kernel/driver_watch.h"
#include "runtime/kernel/protocol.h"
#include "runtime/kernel/repl.h"
#include "runtime/kernel/kernel.h"

namespace kern::kernel {

// The monotonic clock and the timerfds of the loop (supervisor_loop.cc).
uint64_t now_ns();
void arm_timer(int tfd, uint64_t ns);  // fires once, in ns (0 is made 1)
void disarm_timer(int tfd);
// The first wait before looking at the driver's main thread again (it doubles, to 5 ms).
inline constexpr uint64_t kFirstCheckNs = 20000;

class Supervisor {
 public:
  struct Hooks {
    int listen_fd = -1;  // start: the unix socket
    int diag_fd = 2;     // where start-up stderr goes before the kernel is ready
    int signal_fd = -1;  // SIGTERM/SIGINT/SIGHUP of the supervisor: stop the kernel
    std::function<void(const nlohmann::json&)> on_ready;
  };

  Supervisor(const BoxSpec& spec, const KernelConfig& cfg, Hooks hooks);
  ~Supervisor();

  // serve: one client on two fds (stdin/stdout); its end of input stops the kernel.
  void add_stream_client(int in_fd, int out_fd);
  // Runs until stopped; an Error when the kernel could not start.
  Result<int> run();

 private:
  struct Answer {
    bool ready = false;
    std::string line;
    // A cell's result is written from the kept result, a piece at a time (result_line_pieces).
    std::shared_ptr<const CellResult> result;
    nlohmann::json id;
  };
  struct Conn {
    uint64_t serial = 0;  // names it in the loop's epoll set (poll_set.h)
    int in = -1, out = -1;
    UniqueFd owned;  // socket clients
    bool stream = false;  // serve's stdin/stdout
    bool closed_in = false, broken_out = false;
    LineReader lines;
    std::deque<Answer> answers;
  };

  int input_fd() const;
  void read_output(UniqueFd& fd, bool is_err);
  void drain_output();
  // The end socket and the output pipes in an epoll set of their own: queued_box_io() tells, in
  // one epoll_wait, which of them hold something now.
  static constexpr unsigned kQueuedEnd = 1, kQueuedOut = 2, kQueuedErr = 4;
  void watch_box_io();
  unsigned queued_box_io();
  bool read_end_packet();
  void on_packet(pid_t sender, const char* data, size_t len, bool cut);
  DriverView look_at_driver();
  void confirm_end(int looks);
  void on_check_timer();
  void arm_check(uint64_t ns);
  void apply(Actions a);
  void on_box_started();
  void try_ready();
  void become_ready();
  std::string memory_verdict_name() const;
  void on_box_exit();
  void kill_box();
  void interrupt();
  void on_timer();
  void on_repl_timer();
  void write_pending_input();
  // run/fire: true when the cell started, else its refusal was answered on `c`.
  bool start_cell(Conn& c, const Request& req);

  // supervisor_clients.cc
  void accept_client();
  void read_client(Conn& c);
  void handle_line(Conn& c, const std::string& line);
  void handle_request(Conn& c, Request& req);
  void push_answer(Conn& c, std::string line);
  void push_result(Conn& c, const CellResult* r, const nlohmann::json& id);
  void flush_answers();
  nlohmann::json status_object() const;
  void request_exit();

  BoxSpec spec_;
  KernelConfig cfg_;
  Hooks hooks_;
  KernelBox box_;
  bool box_alive_ = false;
  // timer_: the ready timeout, then the running cell's deadline. check_timer_: when to look at
  // the REPL, or at the driver's main thread, again.
  UniqueFd timer_, check_timer_;
  std::optional<DriverWatch> watch_;  // the driver's main thread (drivers that confirm ends)
  uint64_t check_backoff_ns_ = 0;
  bool check_wanted_ = false;  // the machine asked for a look at the driver's main thread
  bool check_armed_ = false;   // check_timer_ is armed (disarming an idle timer is a system call)
  std::optional<DriverView> fresh_view_;  // the look on_packet took in this round of the loop
  std::optional<ReplWatch> repl_;
  CellMachine cells_;
  std::optional<Error> start_error_;
  bool exit_requested_ = false;

  pid_t init_pid_ = 0;
  pid_t driver_pid_ = 0;  // host pid of the driver (or the REPL): the only accepted sender
  pid_t early_sender_ = 0;
  std::string early_packet_;
  nlohmann::json ready_info_ = nlohmann::json::object();
  unsigned char memory_verdict_ = 0;
  uint64_t oom_kills_ = 0;
  uint64_t forged_ = 0;  // packets refused before they were a message: wrong sender, malformed
  uint64_t start_ns_ = 0;
  int64_t started_unix_ = 0;
  nlohmann::json req_id_;    // the running cell's request id
  Answer* waiter_ = nullptr;  // the running cell's run answer slot; null for fire

  UniqueFd drain_ep_;  // watch_box_io()
  std::vector<char> io_buf_;
  PacketAssembler assembler_;
  bool out_drained_ = false, err_drained_ = false;  // this round read the pipe to EAGAIN
  // Every writer of the end socket is gone (the box is ending) and nothing is queued: the socket
  // is no longer polled, where it would report POLLHUP, and recvmsg 0, in every round.
  bool end_hup_ = false;
  std::string pending_in_;
  size_t pending_off_ = 0;
  std::list<Conn> conns_;
  uint64_t conn_serial_ = 100;  // below are the loop's own keys
};

}  // namespace kern::kernel
