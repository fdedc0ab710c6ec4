// The warm kernel's wire formats; see protocol.h. Pure except make_nonce (getrandom).
#include "runtime/kernel/protocol.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "runtime/kernel/json_line.h"
#include "runtime/sys/unique_fd.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;

Error bad(std::string msg) { return Error(ErrorKind::usage, 0, std::move(msg)); }

std::string dump(const json& j) {
  // Cell output is arbitrary bytes: invalid UTF-8 becomes U+FFFD instead of an exception.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The ops a request names (both parsers).
std::optional<Op> op_named(std::string_view name) {
  if (name == "run") return Op::run;
  if (name == "fire") return Op::fire;
  if (name == "poll") return Op::poll;
  if (name == "int") return Op::interrupt;
  if (name == "status") return Op::status;
  if (name == "stop") return Op::stop;
  return std::nullopt;
}

bool timeout_in_range(double t) { return std::isfinite(t) && t >= 0 && t <= 1e7; }

Result<std::string> string_field(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) return fail(bad(std::string("missing field \"") + name + "\""));
  if (!it->is_string()) return fail(bad(std::string("field \"") + name + "\" must be a string"));
  return it->get<std::string>();
}

Status read_timeout(const json& j, Request& r) {
  auto it = j.find("timeout");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_number()) return fail(bad("field \"timeout\" must be a number of seconds"));
  double t = it->get<double>();
  if (!timeout_in_range(t))
    return fail(bad("field \"timeout\" must be between 0 and 10000000 seconds"));
  if (t > 0) r.timeout_s = t;
  return {};
}

// The common, valid requests by hand; nullopt for anything else (nlohmann then parses the line,
// and words every error), so that both paths give the same Request and the same errors.
std::optional<Request> fast_request(std::string_view line) {
  auto members = json_line::parse_flat_object(line);
  if (!members) return std::nullopt;
  using Kind = json_line::Value::Kind;
  Request r;
  json_line::Value *op = nullptr, *code = nullptr, *timeout = nullptr, *cell_id = nullptr;
  for (auto& m : *members) {
    if (m.key == "op") op = &m.value;
    else if (m.key == "code") code = &m.value;
    else if (m.key == "timeout") timeout = &m.value;
    else if (m.key == "cell_id") cell_id = &m.value;
    else if (m.key == "id") {
      switch (m.value.kind) {
        case Kind::string: r.id = m.value.text; break;
        case Kind::boolean: r.id = m.value.boolean; break;
        case Kind::null: break;
        case Kind::number: {
          // A number nlohmann cannot hold (1e999) is left to the full parser's error.
          json id = json::parse(m.value.text, nullptr, false);
          if (id.is_discarded()) return std::nullopt;
          r.id = std::move(id);
          break;
        }
      }
    }
  }
  if (!op || op->kind != Kind::string) return std::nullopt;
  std::optional<Op> named = op_named(op->text);
  if (!named) return std::nullopt;
  r.op = *named;
  if (r.op == Op::run || r.op == Op::fire) {
    if (!code || code->kind != Kind::string) return std::nullopt;
    r.code = std::move(code->text);
    if (timeout && timeout->kind != Kind::null) {
      if (timeout->kind != Kind::number) return std::nullopt;
      double t = 0;
      const std::string& lit = timeout->text;
      auto res = std::from_chars(lit.data(), lit.data() + lit.size(), t);
      if (res.ec != std::errc() || res.ptr != lit.data() + lit.size() || !timeout_in_range(t)) return std::nullopt;
      if (t > 0) r.timeout_s = t;
    }
  } else if (r.op == Op::poll && cell_id && cell_id->kind != Kind::null) {
    if (cell_id->kind != Kind::string) return std::nullopt;
    r.cell_id = std::move(cell_id->text);
  }
  return r;
}

}  // namespace

Result<Request> parse_request(std::string_view line, json* id) {
  if (auto fast = fast_request(line)) {
    if (id && !fast->id.is_null()) *id = fast->id;
    return std::move(*fast);
  }
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) return fail(bad("request is not JSON"));
  if (!j.is_object()) return fail(bad("request must be a JSON object"));
  Request r;
  if (auto it = j.find("id"); it != j.end()) {
    r.id = *it;
    if (id) *id = *it;
  }
  KERN_TRY_ASSIGN(std::string op, string_field(j, "op"));
  std::optional<Op> named = op_named(op);
  if (!named) {
    std::string shown = op.size() > 40 ? op.substr(0, 40) + "..." : op;
    return fail(bad("unknown op \"" + shown + "\" (known: run, fire, poll, int, status, stop)"));
  }
  r.op = *named;
  if (r.op == Op::run || r.op == Op::fire) {
    KERN_TRY_ASSIGN(r.code, string_field(j, "code"));
    KERN_TRY(read_timeout(j, r));
  } else if (r.op == Op::poll) {
    if (auto it = j.find("cell_id"); it != j.end() && !it->is_null()) {
      if (!it->is_string()) return fail(bad("field \"cell_id\" must be a string"));
      r.cell_id = it->get<std::string>();
    }
  }
  return r;
}

std::string_view status_name(CellStatus s) {
  switch (s) {
    case CellStatus::running: return "running";
    case CellStatus::done: return "done";
    case CellStatus::timeout: return "timeout";
    case CellStatus::busy: return "busy";
    case CellStatus::dead: return "dead";
    case CellStatus::error: return "error";
  }
  return "error";
}

namespace {

constexpr size_t kAnswerPiece = 1 << 20;

// A JSON string of `data` for `sink`: a valid UTF-8 string in pieces cut between characters
// (each escaped alone gives the same bytes), anything else whole (nlohmann's replacements).
bool string_pieces(std::string_view data, std::string& buf, const std::function<bool(std::string_view)>& sink) {
  if (data.size() <= kAnswerPiece || !json_line::is_utf8(data)) {
    json_line::append_string(buf, data);
    return true;
  }
  buf += '"';
  while (!data.empty()) {
    size_t n = std::min(data.size(), kAnswerPiece);
    while (n < data.size() && n > 0 && (static_cast<unsigned char>(data[n]) & 0xC0) == 0x80) --n;
    std::string piece;
    json_line::append_string(piece, data.substr(0, n));
    buf.append(piece, 1, piece.size() - 2);  // without its quotes
    if (!sink(buf)) return false;
    buf.clear();
    data.remove_prefix(n);
  }
  buf += '"';
  return true;
}

}  // namespace

bool result_line_pieces(const CellResult& r, const json& id, const std::function<bool(std::string_view)>& sink) {
  // By hand, in nlohmann's order (its objects are std::maps: keys sorted) and its formatting,
  // which the unit test compares with nlohmann's own dump of the same object.
  std::string s;
  s.reserve(160 + std::min(r.out.size() + r.err.size(), kAnswerPiece) + r.results.size() + r.error.size());
  s += "{\"cell_id\":";
  if (r.cell_id.empty()) s += "null";
  else json_line::append_string(s, r.cell_id);
  s += ",\"duration_ms\":";
  json_line::append_duration_ms(s, std::round(r.duration_ms * 1000.0) / 1000.0);
  if (!r.error.empty()) {
    s += ",\"error\":";
    json_line::append_string(s, r.error);
  }
  if (!id.is_null()) {
    s += ",\"id\":";
    s += dump(id);
  }
  if (r.oom) s += ",\"oom\":true";
  s += ",\"rc\":";
  s += r.rc ? std::to_string(*r.rc) : std::string("null");
  s += ",\"results\":";
  s += r.results;
  if (r.state_lost) s += ",\"state_lost\":true";
  s += ",\"status\":\"";
  s += status_name(r.status);
  s += "\",\"stderr\":";
  if (!string_pieces(r.err, s, sink)) return false;
  s += ",\"stdout\":";
  if (!string_pieces(r.out, s, sink)) return false;
  s += r.truncated ? ",\"truncated\":true}\n" : ",\"truncated\":false}\n";
  return sink(s);
}

std::string result_line(const CellResult& r, const json& id) {
  std::string line;
  line.reserve(160 + r.out.size() + r.err.size() + r.results.size() + r.error.size());
  result_line_pieces(r, id, [&line](std::string_view piece) {
    line += piece;
    return true;
  });
  return line;
}

std::string error_line(std::string_view message, const json& id) {
  json j = json::object();
  if (!id.is_null()) j["id"] = id;
  j["status"] = "error";
  j["error"] = std::string(message);
  std::string s = dump(j);
  s += '\n';
  return s;
}

std::string object_line(json obj, const json& id) {
  if (!id.is_null()) obj["id"] = id;
  std::string s = dump(obj);
  s += '\n';
  return s;
}

Result<json> parse_answer(std::string_view line) {
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail(ErrorKind::internal, 0, "the kernel's answer is not a JSON object");
  return j;
}

void LineReader::feed(const char* data, size_t len) {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  while (len > 0) {
    const void* nl_p = std::memchr(data, '\n', len);
    size_t seg = nl_p ? static_cast<size_t>(static_cast<const char*>(nl_p) - data) + 1 : len;
    if (skipping_) {
      data += seg;
      len -= seg;
      if (nl_p) skipping_ = false;
      continue;
    }
    size_t body = nl_p ? seg - 1 : seg;
    if (partial_ + body > limit_) {
      // Too long: drop what was kept of it, answer once (a marker line keeps the order of
      // answers), and skip the rest of the line.
      buf_.resize(buf_.size() - partial_);
      partial_ = 0;
      buf_.append("\0\n", 2);
      skipping_ = !nl_p;
      data += seg;
      len -= seg;
      continue;
    }
    buf_.append(data, seg);
    partial_ = nl_p ? 0 : partial_ + seg;
    data += seg;
    len -= seg;
  }
}

LineReader::Next LineReader::next(std::string& line) {
  if (pos_ >= buf_.size()) return Next::none;
  size_t nl = buf_.find('\n', pos_);
  if (nl == std::string::npos) return Next::none;
  Next what = Next::line;
  if (nl == pos_ + 1 && buf_[pos_] == '\0') {
    what = Next::too_long;
    line.clear();
  } else {
    line.assign(buf_, pos_, nl - pos_);
  }
  pos_ = nl + 1;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  return what;
}

void OutputBuffer::append(const char* data, size_t len) {
  uint64_t room = data_.size() < limit_ ? limit_ - data_.size() : 0;
  size_t keep = len < room ? len : static_cast<size_t>(room);
  // Doubling, but never past the limit: a buffer that reaches the limit is not given twice its
  // room (a 64 MiB limit grew a 120 MiB buffer).
  if (data_.size() + keep > data_.capacity()) {
    uint64_t want = std::max<uint64_t>(2 * data_.capacity(), data_.size() + keep);
    data_.reserve(static_cast<size_t>(std::min<uint64_t>(want, limit_)));
  }
  data_.append(data, keep);
  dropped_ += len - keep;
}

PacketAssembler::Feed PacketAssembler::feed(const char* data, size_t len) {
  if (done_) reset();
  char flag = len > 0 ? data[0] : '\0';
  if (flag == 'W' || flag == 'S') {
    // A new message: whatever was pending (a stray fragment) is dropped.
    bool stray = started_;
    reset();
    started_ = true;
    if (stray) ++dropped_fragments_;
  } else if (flag != 'M' && flag != 'E') {
    reset();
    return Feed::bad;
  } else if (!started_) {
    return Feed::bad;  // a continuation with no start
  }
  if (!overflow_) {
    if (msg_.size() + len - 1 > limit_) {
      overflow_ = true;
      msg_.clear();
    } else {
      msg_.append(data + 1, len - 1);
    }
  }
  if (flag == 'S' || flag == 'M') return Feed::partial;
  done_ = true;
  started_ = false;
  if (overflow_) {
    msg_.clear();
    return Feed::bad;
  }
  return Feed::complete;
}

std::string driver_frame(std::string_view nonce, std::string_view cell_id, std::string_view code) {
  std::string f;
  f.reserve(code.size() + nonce.size() + cell_id.size() + 32);
  f += "K2 ";
  f += cell_id;
  f += ' ';
  f += std::to_string(code.size());
  f += '\n';
  f += code;
  f += nonce;
  f += '\n';
  return f;
}

Result<DriverDone> parse_driver_done(std::string_view message, std::string_view expected_nonce) {
  // The usual message by hand (json_line.h); any other shape, and every refusal, by nlohmann.
  if (auto fast = json_line::parse_driver_end(message); fast && fast->nonce == expected_nonce) {
    DriverDone d;
    d.rc = fast->rc;
    d.results = std::move(fast->results);
    return d;
  }
  json j = json::parse(message.begin(), message.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail(bad("driver message is not a JSON object"));
  auto n = j.find("nonce");
  if (n == j.end() || !n->is_string() || n->get_ref<const std::string&>() != expected_nonce)
    return fail(bad("driver message does not carry the running cell's nonce"));
  auto rc = j.find("rc");
  if (rc == j.end() || !rc->is_number_integer()) return fail(bad("driver message has no integer rc"));
  DriverDone d;
  d.rc = rc->get<int>();
  if (auto r = j.find("results"); r != j.end()) {
    if (!r->is_array()) return fail(bad("driver message: results must be an array"));
    for (auto& item : *r)
      if (!item.is_object()) return fail(bad("driver message: each result must be an object"));
    d.results = dump(*r);
  }
  return d;
}

Result<json> parse_driver_ready(std::string_view message) {
  json j = json::parse(message.begin(), message.end(), nullptr, false);
  // Every type is checked before it is read: a driver's {"ready":1} is refused, not thrown.
  auto ready = j.is_object() ? j.find("ready") : j.end();
  if (j.is_discarded() || !j.is_object() || ready == j.end() || !ready->is_boolean() || !ready->get<bool>())
    return fail(bad("the driver's first message is not {\"ready\":true,...}"));
  return j;
}

Result<std::string> NoncePool::next() {
  if (end_ - pos_ < 16) {
    // One read per 256 nonces, not one per cell.
    size_t got = 0;
    int err = 0;
    while (got < sizeof pool_) {
      ssize_t n = source_(pool_ + got, sizeof pool_ - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        break;
      }
      got += static_cast<size_t>(n);
    }
    pos_ = 0;
    end_ = got;
    if (got < 16) {
      end_ = 0;
      return fail(ErrorKind::setup, err, "no random bytes for the cell's nonce (getrandom, /dev/urandom)");
    }
  }
  const unsigned char* b = pool_ + pos_;
  pos_ += 16;
  static const char* hex = "0123456789abcdef";
  std::string s(32, '0');
  for (size_t i = 0; i < 16; ++i) {
    s[2 * i] = hex[b[i] >> 4];
    s[2 * i + 1] = hex[b[i] & 15];
  }
  return s;
}

namespace {

ssize_t system_random(void* buf, size_t len) {
  ssize_t n = ::getrandom(buf, len, 0);
  if (n >= 0 || errno == EINTR) return n;
  UniqueFd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return -1;
  return ::read(fd.get(), buf, len);
}

}  // namespace

Result<std::string> make_nonce() {
  static NoncePool pool(system_random);
  return pool.next();
}

}  // namespace kern::kernel
