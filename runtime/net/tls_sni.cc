// ClientHello SNI parsing; see tls_sni.h. Pure.
#include "runtime/net/tls_sni.h"

#include <optional>

namespace kern::net {
namespace {

// A bounds-checked reader over one byte span: every read past the end fails.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> d) : d_(d) {}
  bool u8(uint32_t& v) { return take(1, v); }
  bool u16(uint32_t& v) { return take(2, v); }
  bool u24(uint32_t& v) { return take(3, v); }
  bool skip(size_t n) {
    if (n > d_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  // A sub-reader over the next n bytes, which this reader skips.
  std::optional<Reader> sub(size_t n) {
    if (n > d_.size() - pos_) return std::nullopt;
    Reader r(d_.subspan(pos_, n));
    pos_ += n;
    return r;
  }
  size_t left() const { return d_.size() - pos_; }
  std::span<const uint8_t> rest() const { return d_.subspan(pos_); }

 private:
  bool take(size_t n, uint32_t& v) {
    if (n > d_.size() - pos_) return false;
    v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | d_[pos_ + i];
    pos_ += n;
    return true;
  }
  std::span<const uint8_t> d_;
  size_t pos_ = 0;
};

SniResult result(SniStatus s) { return SniResult{s, {}}; }

// The server_name extension body (RFC 6066 section 3): a list with exactly one host_name.
SniResult server_name(Reader ext) {
  uint32_t list_len = 0;
  if (!ext.u16(list_len) || list_len != ext.left() || list_len == 0) return result(SniStatus::malformed);
  std::string name;
  int names = 0;
  while (ext.left() > 0) {
    uint32_t type = 0, len = 0;
    if (!ext.u8(type) || !ext.u16(len)) return result(SniStatus::malformed);
    auto body = ext.sub(len);
    if (!body || len == 0) return result(SniStatus::malformed);
    if (type != 0) return result(SniStatus::malformed);  // only host_name is defined
    if (++names > 1) return result(SniStatus::malformed);  // two host names: ambiguous
    for (uint8_t c : body->rest()) {
      if (c <= 0x20 || c >= 0x7f) return result(SniStatus::malformed);
      name.push_back(static_cast<char>(c));
    }
  }
  return SniResult{SniStatus::ok, name};
}

}  // namespace

SniResult parse_client_hello_sni(std::span<const uint8_t> data) {
  if (data.empty()) return result(SniStatus::need_more);
  // Record header: type 22 (handshake), version 3.x, length.
  if (data[0] != 22) return result(SniStatus::not_tls);
  if (data.size() >= 2 && data[1] != 3) return result(SniStatus::not_tls);
  if (data.size() < 5) return result(SniStatus::need_more);
  uint32_t rec_len = (uint32_t{data[3]} << 8) | data[4];
  if (rec_len == 0 || rec_len > 16384) return result(SniStatus::malformed);
  if (data.size() < 5 + rec_len) return result(SniStatus::need_more);
  Reader rec(data.subspan(5, rec_len));

  uint32_t hs_type = 0, hs_len = 0;
  if (!rec.u8(hs_type)) return result(SniStatus::malformed);
  if (hs_type != 1) return result(SniStatus::not_tls);  // the first handshake must be ClientHello
  if (!rec.u24(hs_len)) return result(SniStatus::malformed);
  if (hs_len > rec.left()) return result(SniStatus::fragmented);
  if (hs_len < rec.left()) return result(SniStatus::malformed);  // trailing bytes in the record
  Reader ch = *rec.sub(hs_len);

  uint32_t v = 0, n = 0;
  if (!ch.u16(v) || (v >> 8) != 3) return result(SniStatus::malformed);  // legacy_version
  if (!ch.skip(32)) return result(SniStatus::malformed);                 // random
  if (!ch.u8(n) || n > 32 || !ch.skip(n)) return result(SniStatus::malformed);  // session id
  if (!ch.u16(n) || n < 2 || n % 2 != 0 || !ch.skip(n)) return result(SniStatus::malformed);  // suites
  if (!ch.u8(n) || n < 1 || !ch.skip(n)) return result(SniStatus::malformed);  // compression
  if (ch.left() == 0) return result(SniStatus::no_sni);  // no extensions at all
  uint32_t ext_len = 0;
  if (!ch.u16(ext_len) || ext_len != ch.left()) return result(SniStatus::malformed);

  std::optional<SniResult> found;
  while (ch.left() > 0) {
    uint32_t type = 0, len = 0;
    if (!ch.u16(type) || !ch.u16(len)) return result(SniStatus::malformed);
    auto body = ch.sub(len);
    if (!body) return result(SniStatus::malformed);
    if (type == 0) {
      if (found) return result(SniStatus::malformed);  // a second server_name extension
      found = server_name(*body);
      if (found->status != SniStatus::ok) return *found;
    }
  }
  return found ? *found : result(SniStatus::no_sni);
}

const char* sni_status_name(SniStatus s) {
  switch (s) {
    case SniStatus::need_more: return "incomplete ClientHello";
    case SniStatus::ok: return "ok";
    case SniStatus::not_tls: return "the first bytes are not a TLS ClientHello";
    case SniStatus::malformed: return "malformed ClientHello";
    case SniStatus::no_sni: return "ClientHello without a server name (SNI)";
    case SniStatus::fragmented: return "ClientHello split over several records";
  }
  return "?";
}

}  // namespace kern::net
