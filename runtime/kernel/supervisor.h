// The supervisor's state machine and poll loop (internal to runtime/kernel/). Supervisor
// process only. supervisor.cc holds the box side and the cells, supervisor_clients.cc the
// client side (requests, answers), start.cc the two ways of running it (serve, start).
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
#include "runtime/kernel/protocol.h"
#include "runtime/kernel/repl.h"
#include "runtime/kernel/kernel.h"

namespace kern::kernel {

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
  enum class State { starting, idle, running, dead };
  enum class StartOutcome { started, busy, dead };

  struct Answer {
    bool ready = false;
    std::string line;
  };
  struct Conn {
    int in = -1, out = -1;
    UniqueFd owned;  // socket clients
    bool stream = false;  // serve's stdin/stdout
    bool closed_in = false, broken_out = false;
    LineReader lines;
    std::deque<Answer> answers;
  };
  struct Cell {
    std::string id, nonce;
    uint64_t start_ns = 0;
    double timeout_s = 0;
    bool timed_out = false;
    uint64_t grace_end_ns = 0;
    nlohmann::json req_id;
    Answer* waiter = nullptr;  // the run request's answer slot; null for fire
  };

  int input_fd() const;
  void read_output(UniqueFd& fd, bool is_err);
  void drain_output();
  void read_end_packets();
  void on_packet(pid_t sender, const char* data, size_t len, bool cut);
  void read_started();
  void try_ready();
  void become_ready();
  std::string memory_verdict_name() const;
  void read_report();
  void on_launcher_exit();
  void kill_box();
  void interrupt();
  void on_timer();
  void on_repl_timer();
  std::string deadline_message(bool torn_down) const;
  void write_pending_input();
  StartOutcome start_cell(const Request& req);
  void finish_cell(CellStatus status, std::optional<int> rc, nlohmann::json results, std::string error,
                   bool state_lost);

  // supervisor_clients.cc
  void accept_client();
  void read_client(Conn& c);
  void handle_line(Conn& c, const std::string& line);
  void handle_request(Conn& c, Request& req);
  void push_answer(Conn& c, std::string line);
  void flush_answers();
  nlohmann::json status_object() const;
  std::string refusal_line(StartOutcome why, const nlohmann::json& id) const;
  void request_exit();

  BoxSpec spec_;
  KernelConfig cfg_;
  Hooks hooks_;
  KernelBox box_;
  bool launcher_alive_ = false;
  UniqueFd timer_, repl_timer_, init_pidfd_;
  std::optional<ReplWatch> repl_;
  State state_ = State::starting;
  std::optional<Error> start_error_;
  bool exit_requested_ = false;

  pid_t init_pid_ = 0;
  pid_t driver_pid_ = 0;  // host pid of the driver (or the REPL): the only accepted sender
  pid_t early_sender_ = 0;
  std::string early_packet_;
  nlohmann::json ready_info_ = nlohmann::json::object();
  unsigned char memory_verdict_ = 0;
  uint64_t oom_kills_ = 0;
  uint64_t forged_ = 0;  // packets refused: wrong sender, wrong nonce, malformed
  uint64_t start_ns_ = 0;
  int64_t started_unix_ = 0;
  std::string dead_reason_;

  std::vector<char> io_buf_;
  LineReader report_lines_{1 << 20};
  PacketAssembler assembler_;
  OutputBuffer out_, err_;
  bool out_drained_ = false, err_drained_ = false;  // this round read the pipe to EAGAIN
  std::string pending_in_;
  size_t pending_off_ = 0;
  Cell cell_;
  uint64_t cells_ = 0;
  std::deque<CellResult> results_;
  std::list<Conn> conns_;
};

}  // namespace kern::kernel
