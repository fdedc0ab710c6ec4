// Which URLs the registry client may fetch, judged one URL at a time (the registry's base, a
// token realm, every redirect hop, blob storage), never inherited from the registry's host:
// https anywhere, plain http only to a loopback host, nothing else. Pure; any process.
#pragma once

#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::oci {

struct UrlParts {
  std::string scheme;  // lowercased
  std::string host;    // lowercased; an IPv6 literal without its brackets
  std::string port;    // as written, or the scheme's default (443, 80)
};

// ASCII lowercase (schemes, host names, header names and parameters: never locale-dependent).
std::string ascii_lower(std::string_view s);

// Splits an absolute http(s) URL. User info ("user:pass@") is refused: credentials travel in
// headers only.
Result<UrlParts> split_url(std::string_view url);

// "localhost", 127.0.0.0/8 written as a dotted quad, "::1".
bool loopback_host(std::string_view host);

// Refuses `url` unless it is https, or http to a loopback host, or http to `plain_http_host`
// ("host[:port]" as references write it; a registry the user marked insecure). `role` names
// the URL in the message ("the token realm", "a redirect").
Status check_fetch_url(std::string_view url, std::string_view role, std::string_view plain_http_host = {});

// Same scheme, host and port: an Authorization header may follow a redirect only then.
bool same_origin(std::string_view a, std::string_view b);

}  // namespace kern::oci
