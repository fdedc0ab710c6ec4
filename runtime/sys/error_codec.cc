// The Error wire form; see error_codec.h.
#include "runtime/sys/error_codec.h"

#include <cstdint>
#include <cstring>

namespace kern::sys {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kFixed = 1 + 1 + 4 + 4;

class Writer {
 public:
  Writer(char* buf, size_t cap) : buf_(buf), cap_(cap) {}
  bool raw(const void* p, size_t n) {
    if (cap_ - len_ < n) return false;
    std::memcpy(buf_ + len_, p, n);
    len_ += n;
    return true;
  }
  template <typename T>
  bool num(T v) { return raw(&v, sizeof v); }
  // Cuts the string to what still fits, keeping `reserve` bytes free for what follows.
  void str(std::string_view s, size_t reserve) {
    size_t room = cap_ - len_;
    size_t avail = room > reserve + 2 ? room - reserve - 2 : 0;
    if (s.size() > avail) s = s.substr(0, avail);
    if (s.size() > 0xffff) s = s.substr(0, 0xffff);
    uint16_t n = static_cast<uint16_t>(s.size());
    (void)num(n);
    (void)raw(s.data(), s.size());
  }
  size_t len() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  template <typename T>
  bool num(T* v) {
    if (b_.size() - pos_ < sizeof *v) return false;
    std::memcpy(v, b_.data() + pos_, sizeof *v);
    pos_ += sizeof *v;
    return true;
  }
  bool str(std::string* out) {
    uint16_t n = 0;
    if (!num(&n) || b_.size() - pos_ < n) return false;
    out->assign(b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

size_t encode(char* buf, size_t cap, ErrorKind kind, int err, int code, std::string_view domain,
              std::string_view message, std::string_view hint, const std::vector<std::string>* frames) noexcept {
  if (cap < kFixed + 2 * 3 + 1) return 0;
  Writer w(buf, cap);
  (void)w.num(kVersion);
  (void)w.num(static_cast<uint8_t>(kind));
  (void)w.num(static_cast<int32_t>(err));
  (void)w.num(static_cast<int32_t>(code));
  size_t nframes = frames ? frames->size() : 0;
  if (nframes > 32) nframes = 32;
  // What follows each string: the remaining strings' length fields and the frame count.
  w.str(domain, 2 + 2 + 1 + 2 * nframes);
  w.str(message, 2 + 1 + 2 * nframes);
  w.str(hint, 1 + 2 * nframes);
  (void)w.num(static_cast<uint8_t>(nframes));
  for (size_t i = 0; i < nframes; ++i) w.str((*frames)[i], 2 * (nframes - i - 1));
  return w.len();
}

}  // namespace

size_t encode_error_raw(char* buf, size_t cap, ErrorKind kind, int err, std::string_view message,
                        std::string_view hint) noexcept {
  return encode(buf, cap, kind, err, 0, {}, message, hint, nullptr);
}

size_t encode_error(const Error& e, char* buf, size_t cap) noexcept {
  return encode(buf, cap, e.kind(), e.sys_errno(), e.code(), e.code_domain(), e.message(), e.explicit_hint(),
                &e.context());
}

std::string encode_error(const Error& e) {
  std::string out(kMaxEncodedError, '\0');
  out.resize(encode_error(e, out.data(), out.size()));
  return out;
}

Result<Error> decode_error(std::string_view bytes) {
  auto bad = [](const char* why) {
    return fail(ErrorKind::internal, EPROTO, std::string("malformed error record: ") + why);
  };
  Reader r(bytes);
  uint8_t version = 0, kind = 0, nframes = 0;
  int32_t err = 0, code = 0;
  std::string domain, message, hint;
  if (!r.num(&version) || !r.num(&kind) || !r.num(&err) || !r.num(&code)) return bad("truncated");
  if (version != kVersion) return bad("unknown version");
  if (kind > static_cast<uint8_t>(ErrorKind::internal)) return bad("unknown kind");
  if (!r.str(&domain) || !r.str(&message) || !r.str(&hint) || !r.num(&nframes)) return bad("truncated");
  std::vector<std::string> frames(nframes);
  for (auto& f : frames)
    if (!r.str(&f)) return bad("truncated");
  if (!r.done()) return bad("trailing bytes");
  Error e(static_cast<ErrorKind>(kind), err, std::move(message));
  for (auto& f : frames) e.with_context(std::move(f));
  if (!hint.empty()) e.with_hint(std::move(hint));
  if (code != 0) e.with_code(std::move(domain), code);
  return e;
}

}  // namespace kern::sys
