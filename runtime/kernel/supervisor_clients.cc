// The supervisor's client side: accepting unix-socket clients (same uid only), reading request
// lines, answering in order. Supervisor process only.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "runtime/kernel/supervisor_loop.h"
#include "runtime/sys/fdio.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxClients = 64;

}  // namespace

void Supervisor::add_stream_client(int in_fd, int out_fd) {
  Conn& c = conns_.emplace_back();
  c.serial = ++conn_serial_;
  c.in = in_fd;
  c.out = out_fd;
  c.stream = true;
}

void Supervisor::accept_client() {
  int fd = ::accept4(hooks_.listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  UniqueFd owned(fd);
  struct ucred cr;
  socklen_t len = sizeof cr;
  // The socket's directory is 0700 already; the peer's uid is checked anyway, so that a
  // descriptor passed to another user's process is still refused.
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.uid != ::getuid()) return;
  if (conns_.size() >= kMaxClients) {
    std::string l = error_line("too many clients connected to this kernel");
    (void)sys::write_all_raw(fd, l.data(), l.size());
    return;
  }
  // A client that stops reading must not stall the kernel for long.
  struct timeval tv = {30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  Conn& c = conns_.emplace_back();
  c.serial = ++conn_serial_;
  c.in = c.out = fd;
  c.owned = std::move(owned);
}

void Supervisor::read_client(Conn& c) {
  ssize_t n;
  do n = ::read(c.in, io_buf_.data(), io_buf_.size());
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    // serve: the end of input ends the kernel once the cell running then has been answered
    // (see Supervisor::run); a reader that went away ends it at once.
    c.closed_in = true;
    return;
  }
  c.lines.feed(io_buf_.data(), static_cast<size_t>(n));
  std::string line;
  for (;;) {
    LineReader::Next what = c.lines.next(line);
    if (what == LineReader::Next::none) break;
    if (what == LineReader::Next::too_long) {
      push_answer(c, error_line("request line longer than " + std::to_string(kMaxRequestLine) +
                                " bytes; skipped"));
      continue;
    }
    handle_line(c, line);
    if (exit_requested_) break;
  }
}

void Supervisor::handle_line(Conn& c, const std::string& line) {
  if (line.empty() || line == "\r") return;
  json id;
  auto req = parse_request(line, &id);
  if (!req) {
    push_answer(c, error_line(req.error().message(), id));
    return;
  }
  handle_request(c, *req);
}

void Supervisor::handle_request(Conn& c, Request& req) {
  switch (req.op) {
    case Op::run: {
      if (!start_cell(c, req)) return;
      c.answers.emplace_back();
      waiter_ = &c.answers.back();
      return;
    }
    case Op::fire: {
      if (!start_cell(c, req)) return;
      push_answer(c, object_line({{"cell_id", cells_.cell_id()}, {"status", "running"}}, req.id));
      return;
    }
    case Op::poll: {
      std::string want = req.cell_id;
      if (want.empty()) {
        if (cells_.running()) want = cells_.cell_id();
        else if (cells_.latest()) want = cells_.latest()->cell_id;
      }
      if (cells_.running() && want == cells_.cell_id()) {
        push_answer(c, object_line({{"cell_id", want}, {"status", "running"}}, req.id));
        return;
      }
      if (const CellResult* r = cells_.result(want)) {
        push_result(c, r, req.id);
        return;
      }
      push_answer(c, error_line(want.empty() ? std::string("no cell has run yet")
                                             : "no cell \"" + want.substr(0, 64) + "\" (only the last 32 are kept)",
                                req.id));
      return;
    }
    case Op::interrupt: {
      json j = {{"op", "int"}, {"status", "done"}};
      if (cells_.running()) {
        j["cell_id"] = cells_.cell_id();
        apply(cells_.interrupt_request());
      } else {
        j["cell_id"] = nullptr;
      }
      push_answer(c, object_line(std::move(j), req.id));
      return;
    }
    case Op::status:
      push_answer(c, object_line(status_object(), req.id));
      return;
    case Op::stop:
      push_answer(c, object_line({{"op", "stop"}, {"status", "done"}, {"name", cfg_.name}}, req.id));
      request_exit();
      return;
  }
}

json Supervisor::status_object() const {
  // A cell past its deadline is still running (the man page's states: starting, idle, running, dead).
  std::string_view state = cells_.running() ? "running" : state_name(cells_.state());
  json j = {{"op", "status"},
            {"status", "done"},
            {"name", cfg_.name},
            {"lang", lang_name(cfg_.lang)},
            {"state", state},
            {"cells", cells_.cells()},
            {"pid", ::getpid()},
            {"box_pid", init_pid_},
            {"memory", memory_verdict_name()},
            {"refused_packets", forged_ + cells_.refused_claims()}};
  j["uptime_s"] = static_cast<double>(static_cast<uint64_t>(::time(nullptr))) - static_cast<double>(started_unix_);
  j["cell_id"] = cells_.running() ? json(cells_.cell_id()) : json(nullptr);
  if (cfg_.lang != Lang::repl) j["ends_confirmed"] = cells_.confirm_idle();
  if (!cells_.dead_reason().empty()) j["error"] = cells_.dead_reason();
  if (oom_kills_ > 0) j["oom"] = true;
  if (ready_info_.contains("version")) j["version"] = ready_info_["version"];
  return j;
}

void Supervisor::push_answer(Conn& c, std::string line) {
  Answer& a = c.answers.emplace_back();
  a.line = std::move(line);
  a.ready = true;
}

void Supervisor::push_result(Conn& c, const CellResult* r, const nlohmann::json& id) {
  Answer& a = c.answers.emplace_back();
  a.result = cells_.share(r);
  if (!a.result) a.line = result_line(*r, id);
  a.id = id;
  a.ready = true;
}

void Supervisor::flush_answers() {
  for (auto& c : conns_) {
    while (!c.answers.empty() && c.answers.front().ready) {
      const Answer& a = c.answers.front();
      auto write = [&c](std::string_view piece) {
        if (sys::write_all_raw(c.out, piece.data(), piece.size()) == 0) return true;
        c.broken_out = true;
        return false;
      };
      if (!c.broken_out) {
        if (a.result) result_line_pieces(*a.result, a.id, write);
        else write(a.line);
      }
      c.answers.pop_front();
    }
    if (c.stream && c.broken_out) request_exit();
    if (c.stream && c.closed_in && c.answers.empty() && !cells_.running()) request_exit();
  }
  // A client gone (end of input answered, or its socket broken) is dropped; a run it was
  // waiting for keeps going and its result stays available to poll.
  for (auto it = conns_.begin(); it != conns_.end();) {
    bool waiting = false;
    for (auto& a : it->answers) waiting |= !a.ready;
    bool gone = it->broken_out || (it->closed_in && it->answers.empty());
    if (gone && !it->stream) {
      if (waiting && waiter_) {
        for (auto& a : it->answers)
          if (&a == waiter_) waiter_ = nullptr;
      }
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

void Supervisor::request_exit() {
  if (exit_requested_) return;
  exit_requested_ = true;
  apply(cells_.stop());
}

}  // namespace kern::kernel
