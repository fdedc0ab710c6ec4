// Reads the server name (SNI) out of the first TLS record a client sends: pure, bounded, and
// strict (anything it does not understand is refused, never guessed at). Used by the egress
// proxy to require that a CONNECT tunnel's ClientHello names the host that was CONNECTed to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kern::net {

enum class SniStatus {
  need_more,   // the record is not complete yet: read more (up to kMaxClientHelloRecord)
  ok,          // `name` holds the host_name
  not_tls,     // the first bytes are not a TLS handshake record carrying a ClientHello
  malformed,   // a length or structure is wrong
  no_sni,      // a well-formed ClientHello without a server_name extension
  fragmented,  // the ClientHello does not fit in the first record (refused: not reassembled)
};

struct SniResult {
  SniStatus status = SniStatus::need_more;
  std::string name;  // as sent (not yet canonical); set when ok
};

// A TLS record carries at most 2^14 bytes of plaintext, plus the 5-byte header.
inline constexpr size_t kMaxClientHelloRecord = 5 + 16384;

SniResult parse_client_hello_sni(std::span<const uint8_t> data);
const char* sni_status_name(SniStatus s);

}  // namespace kern::net
