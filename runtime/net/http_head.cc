// HTTP request head parsing for the egress proxy; see http_head.h. Pure.
#include "runtime/net/http_head.h"

#include <algorithm>
#include <cctype>

namespace kern::net {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool is_tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

HeadResult refuse(std::string why) { return HeadResult{std::nullopt, std::move(why)}; }

std::optional<unsigned> parse_port(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v == 0 || v > 65535) return std::nullopt;
  return v;
}

// host[:port] or [v6][:port]; `default_port` 0 means the port is required.
bool split_authority(std::string_view a, unsigned default_port, std::string& host, unsigned& port) {
  if (a.empty()) return false;
  if (a.find('@') != std::string_view::npos) return false;  // userinfo: refused outright
  std::string_view h, p;
  bool has_port = false;
  if (a.front() == '[') {
    size_t close = a.find(']');
    if (close == std::string_view::npos) return false;
    h = a.substr(1, close - 1);
    std::string_view rest = a.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      p = rest.substr(1);
      has_port = true;
    }
    if (h.empty()) return false;
    host = std::string(h);
    host.insert(0, "[");  // kept recognisable as an address literal
    host.push_back(']');
  } else {
    size_t colon = a.rfind(':');
    if (colon != std::string_view::npos) {
      if (a.find(':') != colon) return false;  // a bare IPv6 literal or garbage
      h = a.substr(0, colon);
      p = a.substr(colon + 1);
      has_port = true;
    } else {
      h = a;
    }
    if (h.empty()) return false;
    host = std::string(h);
  }
  for (char c : host)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f || c == '/' || c == '\\' ||
        c == '%')
      return false;
  if (has_port) {
    auto v = parse_port(p);
    if (!v) return false;
    port = *v;
  } else {
    if (default_port == 0) return false;
    port = default_port;
  }
  return true;
}

bool same_host(std::string_view a, std::string_view b) {
  std::string x = lower(a), y = lower(b);
  if (!x.empty() && x.back() == '.') x.pop_back();
  if (!y.empty() && y.back() == '.') y.pop_back();
  return x == y;
}

}  // namespace

size_t find_head_end(std::string_view buf) {
  size_t p = buf.find("\r\n\r\n");
  return p == std::string_view::npos ? 0 : p + 4;
}

HeadResult parse_request_head(std::string_view head) {
  if (head.size() > kMaxRequestHead) return refuse("request head too large");
  if (head.size() < 4 || head.substr(head.size() - 4) != "\r\n\r\n") return refuse("incomplete request head");
  for (char c : head)
    if (c == '\0') return refuse("NUL byte in the request head");
  HttpHead h;
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  // Request line: METHOD SP TARGET SP VERSION, single spaces.
  size_t s1 = line.find(' ');
  size_t s2 = s1 == std::string_view::npos ? s1 : line.find(' ', s1 + 1);
  if (s1 == std::string_view::npos || s2 == std::string_view::npos || line.find(' ', s2 + 1) != std::string_view::npos)
    return refuse("malformed request line");
  std::string_view method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1), version = line.substr(s2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), is_tchar)) return refuse("malformed method");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return refuse("unsupported HTTP version");
  if (target.empty()) return refuse("empty request target");
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return refuse("control or non-ASCII byte in the request target");
  h.method = std::string(method);
  h.version = std::string(version);

  // Header lines: NAME ":" OWS VALUE OWS; no folding, CRLF only.
  size_t pos = eol + 2;
  int host_headers = 0;
  std::string host_header;
  while (pos < head.size() - 2) {
    size_t e = head.find("\r\n", pos);
    std::string_view l = head.substr(pos, e - pos);
    pos = e + 2;
    if (l.empty()) break;
    if (l.find('\n') != std::string_view::npos || l.find('\r') != std::string_view::npos)
      return refuse("bare CR or LF in a header");
    if (l.front() == ' ' || l.front() == '\t') return refuse("folded header line");
    size_t colon = l.find(':');
    if (colon == std::string_view::npos || colon == 0) return refuse("malformed header line");
    std::string_view name = l.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_tchar)) return refuse("malformed header name");
    std::string_view value = l.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    for (char c : value)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return refuse("control byte in a header value");
    std::string lname = lower(name);
    if (lname == "host") {
      ++host_headers;
      host_header = std::string(value);
    } else if (lname == "transfer-encoding") {
      return refuse("Transfer-Encoding in a request is not supported by the proxy");
    } else if (lname == "content-length") {
      if (h.content_length) return refuse("more than one Content-Length");
      if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), ::isdigit))
        return refuse("malformed Content-Length");
      h.content_length = std::stoull(std::string(value));
    }
    h.headers.emplace_back(std::string(name), std::string(value));
  }
  if (host_headers > 1) return refuse("more than one Host header");

  if (method == "CONNECT") {
    h.connect = true;
    if (!split_authority(target, 0, h.host, h.port)) return refuse("CONNECT target is not host:port");
    if (host_headers == 1) {
      std::string hh;
      unsigned hp = 0;
      if (!split_authority(host_header, h.port, hh, hp) || !same_host(hh, h.host) || hp != h.port)
        return refuse("Host header differs from the CONNECT target");
    }
    return HeadResult{std::move(h), {}};
  }

  // Absolute form only: http://authority[/path][?query]. https:// through a plain request would
  // make the proxy the TLS client, which it never is.
  std::string t = std::string(target);
  if (lower(t.substr(0, 7)) != "http://") return refuse("a plain request must use an absolute http:// URI");
  std::string_view rest = std::string_view(t).substr(7);
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (!split_authority(authority, 80, h.host, h.port)) return refuse("malformed host in the request URI");
  std::string_view path = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (!path.empty() && path.front() == '#') path = {};
  size_t frag = path.find('#');
  if (frag != std::string_view::npos) path = path.substr(0, frag);
  h.path = path.empty() ? "/" : (path.front() == '?' ? "/" + std::string(path) : std::string(path));
  if (host_headers == 0) return refuse("no Host header");
  std::string hh;
  unsigned hp = 0;
  if (!split_authority(host_header, 80, hh, hp) || !same_host(hh, h.host) || hp != h.port)
    return refuse("Host header differs from the request URI's host");
  return HeadResult{std::move(h), {}};
}

std::string forwarded_head(const HttpHead& h) {
  static const char* const kDropped[] = {"connection",         "proxy-connection", "keep-alive", "te",
                                         "proxy-authorization", "proxy-authenticate", "upgrade", "trailer"};
  std::string out = h.method + " " + h.path + " " + h.version + "\r\n";
  for (const auto& [name, value] : h.headers) {
    std::string l = lower(name);
    if (std::find(std::begin(kDropped), std::end(kDropped), l) != std::end(kDropped)) continue;
    out += name + ": " + value + "\r\n";
  }
  out += "Connection: close\r\n\r\n";
  return out;
}

}  // namespace kern::net
