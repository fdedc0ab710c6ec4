// The per-URL transport policy; see url_policy.h.
#include "oci/url_policy.h"

#include <cstdio>

namespace kern::oci {
namespace {

Unexpected<Error> bad_url(std::string_view url, const std::string& why) {
  return fail(ErrorKind::image, EINVAL, "URL \"" + std::string(url) + "\": " + why);
}

// 127.0.0.0/8 as four decimal numbers; the shorthands ("127.1") are not taken for loopback.
bool dotted_quad_127(std::string_view host) {
  if (host.size() > 15 || host.find_first_not_of("0123456789.") != std::string_view::npos) return false;
  unsigned a, b, c, d;
  char extra;
  if (std::sscanf(std::string(host).c_str(), "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &extra) != 4) return false;
  return a == 127 && b <= 255 && c <= 255 && d <= 255;
}

}  // namespace

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

Result<UrlParts> split_url(std::string_view url) {
  size_t colon = url.find("://");
  if (colon == std::string_view::npos) return bad_url(url, "not an absolute URL");
  UrlParts p;
  p.scheme = ascii_lower(url.substr(0, colon));
  std::string_view rest = url.substr(colon + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return bad_url(url, "user info in a URL is not accepted");
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad_url(url, "unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad_url(url, "junk after the IPv6 address");
      port = after.substr(1);
    }
  } else if (size_t c = authority.rfind(':'); c != std::string_view::npos) {
    host = authority.substr(0, c);
    port = authority.substr(c + 1);
  }
  if (host.empty()) return bad_url(url, "no host");
  if (port.find_first_not_of("0123456789") != std::string_view::npos) return bad_url(url, "bad port");
  p.host = ascii_lower(host);
  if (!port.empty()) p.port = std::string(port);
  else if (p.scheme == "https") p.port = "443";
  else if (p.scheme == "http") p.port = "80";
  return p;
}

bool loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || dotted_quad_127(host);
}

Status check_fetch_url(std::string_view url, std::string_view role, std::string_view plain_http_host) {
  KERN_TRY_ASSIGN(UrlParts p, split_url(url));
  if (p.scheme == "https") return {};
  std::string what = std::string(role) + " \"" + std::string(url) + "\"";
  if (p.scheme == "http") {
    if (loopback_host(p.host)) return {};
    if (!plain_http_host.empty()) {
      auto allowed = split_url("http://" + std::string(plain_http_host) + "/");
      if (allowed && allowed->host == p.host && allowed->port == p.port) return {};
    }
    return fail(Error(ErrorKind::image, EACCES, "refusing plain HTTP to " + what +
                                                    ": only a loopback host may be reached without TLS")
                    .with_hint("kern sends nothing over plain HTTP to a host that is not loopback; the registry must give https URLs"));
  }
  return fail(ErrorKind::image, EACCES, "refusing " + what + ": only https (or http to a loopback host) is fetched");
}

bool same_origin(std::string_view a, std::string_view b) {
  auto x = split_url(a), y = split_url(b);
  return x && y && x->scheme == y->scheme && x->host == y->host && x->port == y->port;
}

}  // namespace kern::oci
