// Parses the head of one HTTP/1.x request sent to the egress proxy: pure and strict. A CONNECT
// names its authority (host:port); any other method must use the absolute form
// (http://host[:port]/path) and carry exactly one Host header equal to that URI's host (and port),
// so a request cannot name one host to the proxy and another to the server.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kern::net {

// The head must fit in this many bytes, "\r\n\r\n" included.
inline constexpr size_t kMaxRequestHead = 16384;

struct HttpHead {
  bool connect = false;
  std::string method;
  std::string host;   // as written in the request target, brackets removed for IPv6
  unsigned port = 0;  // the target's port (80 by default for http://)
  std::string path;   // origin form for a plain request ("/" at least); empty for CONNECT
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::optional<unsigned long long> content_length;
};

struct HeadResult {
  std::optional<HttpHead> head;  // set when the head is acceptable
  std::string refusal;           // one line, set otherwise
};

// Where the head ends: the offset just past "\r\n\r\n", or 0 when not (yet) present.
size_t find_head_end(std::string_view buf);

// `head` is the bytes up to and including "\r\n\r\n".
HeadResult parse_request_head(std::string_view head);

// The request as forwarded to the origin: origin-form request line, the client's headers less
// the hop-by-hop and proxy ones, and "Connection: close" (one request per connection, so a second
// request on the same connection can never reach another host).
std::string forwarded_head(const HttpHead& h);

}  // namespace kern::net
