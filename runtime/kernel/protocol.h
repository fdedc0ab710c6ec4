// The warm kernel's wire formats (kern-kernel(1)), pure and unit-tested. Used by the kernel
// supervisor (runtime/kernel/supervisor_loop.cc) and by the `kern kernel` client verbs.
//
// Three channels, three formats:
//   client <-> supervisor   JSON Lines: one request per line, one answer per line, in order
//                           (the unix socket and `kern kernel serve`'s stdin/stdout).
//   supervisor -> driver    a pipe (box fd 3): "K2 CELL_ID NBYTES\n", NBYTES of code, "NONCE\n"
//                           (the nonce last: no part of the process can know it before the
//                           driver has read the whole frame, see cell_machine.h).
//   driver -> supervisor    a SOCK_SEQPACKET socket (box fd 4): a message is one packet 'W'
//                           (whole) or packets 'S' (start), 'M' (more)..., 'E' (end), each flag
//                           followed by a piece of one JSON message; the supervisor takes
//                           packets only from the driver's pid (SCM_CREDENTIALS) and a cell's end
//                           only with that cell's nonce (Python, bash: and only once the
//                           driver's main thread waits for its next cell, cell_machine.h).
// The workload's stdout and stderr are plain pipes that never carry framing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runtime/sys/error.h"

namespace kern::kernel {

inline constexpr uint64_t kDefaultOutputLimit = 64ull << 20;  // per stream, per cell
inline constexpr size_t kMaxRequestLine = 32u << 20;          // a longer line is an error
inline constexpr size_t kMaxDriverMessage = 256u << 20;       // results of one cell, assembled
inline constexpr size_t kDriverPacketPayload = 60000;         // what a driver puts in one packet
inline constexpr int kDriverCellFd = 3;  // the driver reads its cells here (a pipe)
inline constexpr int kDriverEndFd = 4;   // and sends its messages here (SOCK_SEQPACKET)

enum class Op { run, fire, poll, interrupt, status, stop };

struct Request {
  Op op = Op::status;
  std::string code;                 // run, fire
  std::optional<double> timeout_s;  // run, fire; absent = none
  std::string cell_id;              // poll; empty = the latest cell
  nlohmann::json id;                // echoed back when the client gave one
};

// Parses one request line (the common shapes by hand, json_line.h; anything else, and every
// error, by nlohmann). The error message names the problem ("not JSON: ...",
// "unknown op \"x\"", "missing field \"code\"", ...); the id, when one was readable, is in *id.
Result<Request> parse_request(std::string_view line, nlohmann::json* id);

enum class CellStatus { running, done, timeout, busy, dead, error };
std::string_view status_name(CellStatus s);

struct CellResult {
  std::string cell_id;  // empty for busy/dead/error answers that started no cell
  CellStatus status = CellStatus::done;
  std::string out, err;
  std::optional<int> rc;
  std::string results = "[]";  // the JSON text of [{mime: data}, ...], as nlohmann dumps it
  double duration_ms = 0;
  bool truncated = false;
  std::string error;      // why, for busy/dead/error/timeout
  bool state_lost = false;  // the kernel was torn down (timeout past the grace, death)
  bool oom = false;         // the cgroup counted an OOM kill
};

// One answer line (with the trailing '\n'). Invalid UTF-8 in outputs is replaced, never thrown.
std::string result_line(const CellResult& r, const nlohmann::json& id = nullptr);
// The same line in pieces, for `sink` (which returns false to stop): a cell's megabytes of
// output are escaped a piece at a time instead of being held twice, raw and as the line.
bool result_line_pieces(const CellResult& r, const nlohmann::json& id,
                        const std::function<bool(std::string_view)>& sink);
// {"status":"error","error":MESSAGE} (plus "id" when given).
std::string error_line(std::string_view message, const nlohmann::json& id = nullptr);
// Any other answer object, made a line; "id" added when given.
std::string object_line(nlohmann::json obj, const nlohmann::json& id = nullptr);
// Parses an answer line back (the client side).
Result<nlohmann::json> parse_answer(std::string_view line);

// Splits a byte stream into lines of at most `limit` bytes. A longer line is reported once as
// too_long and its remaining bytes are skipped up to its newline, so the stream resynchronises.
class LineReader {
 public:
  explicit LineReader(size_t limit = kMaxRequestLine) : limit_(limit) {}
  void feed(const char* data, size_t len);
  enum class Next { none, line, too_long };
  // Takes the next complete line (without '\n') into `line`.
  Next next(std::string& line);
  bool empty() const { return buf_.size() == pos_ && !skipping_; }

 private:
  size_t limit_;
  std::string buf_;      // complete lines from pos_, then the unfinished one
  size_t pos_ = 0;
  size_t partial_ = 0;   // bytes of the unfinished line at the end of buf_
  bool skipping_ = false;  // inside an over-long line already answered
};

// One stream's output for one cell, capped at `limit` bytes; past it bytes are counted, not kept.
class OutputBuffer {
 public:
  explicit OutputBuffer(uint64_t limit = kDefaultOutputLimit) : limit_(limit) {}
  void set_limit(uint64_t limit) { limit_ = limit; }
  void append(const char* data, size_t len);
  // Empties the buffer, keeping its capacity (no allocation per cell).
  void clear() {
    data_.clear();
    dropped_ = 0;
  }
  const std::string& data() const { return data_; }
  std::string& data() { return data_; }
  bool truncated() const { return dropped_ > 0; }
  uint64_t dropped() const { return dropped_; }

 private:
  uint64_t limit_;
  std::string data_;
  uint64_t dropped_ = 0;
};

// Reassembles one driver message from W, or S M... E, packets. A W or S always starts afresh, so
// a stray fragment cannot prefix the next message.
class PacketAssembler {
 public:
  explicit PacketAssembler(size_t limit = kMaxDriverMessage) : limit_(limit) {}
  enum class Feed { partial, complete, bad };
  Feed feed(const char* data, size_t len);
  // The complete message after Feed::complete; valid until the next feed.
  const std::string& message() const { return msg_; }
  void reset() {
    msg_.clear();
    done_ = false;
    overflow_ = false;
    started_ = false;
  }
  uint64_t dropped_fragments() const { return dropped_fragments_; }

 private:
  size_t limit_;
  std::string msg_;
  bool done_ = false;
  bool overflow_ = false;
  bool started_ = false;
  uint64_t dropped_fragments_ = 0;
};

// The frame that hands one cell to the driver: "K2 CELL_ID NBYTES\n" CODE "NONCE\n".
std::string driver_frame(std::string_view nonce, std::string_view cell_id, std::string_view code);

// What a driver says at the end of a cell: {"nonce":N,"rc":RC,"results":[...]}. A message whose
// nonce is not `expected_nonce`, or that is not of this shape, is an error (the supervisor drops it).
struct DriverDone {
  int rc = 0;
  std::string results = "[]";  // the JSON text of the results array, as nlohmann dumps it
};
Result<DriverDone> parse_driver_done(std::string_view message, std::string_view expected_nonce);

// The driver's first message: {"ready":true,"lang":...,"version":...}.
Result<nlohmann::json> parse_driver_ready(std::string_view message);

// 16 random bytes at a time as 32 hex characters, fetched a page at a time from `source`
// (which returns the bytes it put in `buf`, possibly fewer than asked, or -1 with errno). A
// source that fails or runs dry is an error: never bytes nobody wrote.
class NoncePool {
 public:
  using Source = ssize_t (*)(void* buf, size_t len);
  explicit NoncePool(Source source) : source_(source) {}
  Result<std::string> next();

 private:
  Source source_;
  unsigned char pool_[4096];
  size_t pos_ = 0, end_ = 0;  // pool_[pos_, end_) is unused random data
};

// The process's nonces: getrandom(2), /dev/urandom where getrandom fails (an old kernel, a
// seccomp filter that refuses it).
Result<std::string> make_nonce();

}  // namespace kern::kernel
