// Image reference parsing and normalisation; see reference.h.
#include "oci/reference.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cctype>

#include <vector>

#include "oci/url_policy.h"

namespace kern::oci {
namespace {

constexpr size_t kMaxReference = 4096;
constexpr size_t kMaxRepository = 255;

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// One path component of a repository: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
bool valid_repo_component(std::string_view c) {
  if (c.empty() || !lower_alnum(c.front()) || !lower_alnum(c.back())) return false;
  for (size_t i = 0; i < c.size();) {
    if (lower_alnum(c[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    if (c[i] == '.') {
      j = i + 1;
    } else if (c[i] == '_') {
      j = i + 1;
      if (j < c.size() && c[j] == '_') ++j;
    } else if (c[i] == '-') {
      while (j < c.size() && c[j] == '-') ++j;
    } else {
      return false;
    }
    if (j >= c.size() || !lower_alnum(c[j])) return false;
    i = j;
  }
  return true;
}

// A port: 1 to 65535, digits only.
bool valid_port(std::string_view p) {
  if (p.empty() || p.size() > 5) return false;
  unsigned n = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  return n >= 1 && n <= 65535;
}

// A host name: dot-separated labels of 1 to 63 letters, digits and '-', none at a label's ends.
bool valid_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  size_t pos = 0;
  while (pos <= host.size()) {
    size_t dot = host.find('.', pos);
    if (dot == std::string_view::npos) dot = host.size();
    std::string_view label = host.substr(pos, dot - pos);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!(alnum(c) || c == '-')) return false;
    pos = dot + 1;
  }
  return true;
}

bool valid_registry(std::string_view r) {
  if (r.empty() || r.size() > 255) return false;
  if (r.front() == '[') {  // [IPv6]:port, an address inet_pton takes (no zone: it names no host)
    size_t close = r.find(']');
    if (close == std::string_view::npos) return false;
    std::string addr(r.substr(1, close - 1));
    struct in6_addr a;
    if (addr.empty() || ::inet_pton(AF_INET6, addr.c_str(), &a) != 1) return false;
    std::string_view rest = r.substr(close + 1);
    if (rest.empty()) return true;
    return rest.front() == ':' && valid_port(rest.substr(1));
  }
  size_t colon = r.find(':');
  if (colon != std::string_view::npos && !valid_port(r.substr(colon + 1))) return false;
  return valid_host_name(r.substr(0, colon));
}

Unexpected<Error> bad(std::string_view text, std::string why) {
  return fail(ErrorKind::usage, 0, "invalid image reference \"" + std::string(text) + "\": " + why);
}

std::string current_dir() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return "/";
  return buf.data();
}

std::string absolute(std::string_view path, std::string_view cwd) {
  if (!path.empty() && path.front() == '/') return clean_absolute_path(path);
  std::string base = cwd.empty() ? current_dir() : std::string(cwd);
  return clean_absolute_path(base + "/" + std::string(path));
}

}  // namespace

bool valid_digest(std::string_view text) {
  constexpr std::string_view prefix = "sha256:";
  if (text.size() != prefix.size() + 64 || text.substr(0, prefix.size()) != prefix) return false;
  for (char c : text.substr(prefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool valid_tag(std::string_view text) {
  if (text.empty() || text.size() > 128) return false;
  if (!(alnum(text.front()) || text.front() == '_')) return false;
  for (char c : text)
    if (!(alnum(c) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

std::string Reference::name() const { return registry + "/" + repository; }

std::string Reference::str() const {
  switch (kind) {
    case Kind::oci_layout: return "oci:" + path + (tag.empty() ? "" : ":" + tag);
    case Kind::docker_archive: return "docker-archive:" + path;
    case Kind::registry: break;
  }
  std::string out = name();
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

bool Reference::loopback_registry() const {
  if (kind != Kind::registry) return false;
  auto parts = split_url("https://" + registry + "/");
  return parts && loopback_host(parts->host);
}

Result<Reference> parse_reference(std::string_view text, std::string_view cwd) {
  if (text.empty()) return bad(text, "empty");
  if (text.size() > kMaxReference) return bad(text.substr(0, 64), "too long");
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return bad(text, "control character");

  Reference ref;
  if (text.rfind("oci:", 0) == 0) {
    ref.kind = Reference::Kind::oci_layout;
    std::string_view rest = text.substr(4);
    size_t colon = rest.rfind(':');
    if (colon != std::string_view::npos && rest.find('/', colon) == std::string_view::npos) {
      std::string_view tag = rest.substr(colon + 1);
      if (!valid_tag(tag)) return bad(text, "invalid tag \"" + std::string(tag) + "\"");
      ref.tag = tag;
      rest = rest.substr(0, colon);
    }
    if (rest.empty()) return bad(text, "oci: needs a directory");
    ref.path = absolute(rest, cwd);
    return ref;
  }
  if (text.rfind("docker-archive:", 0) == 0) {
    ref.kind = Reference::Kind::docker_archive;
    std::string_view rest = text.substr(15);
    if (rest.empty()) return bad(text, "docker-archive: needs a file");
    ref.path = absolute(rest, cwd);
    return ref;
  }

  std::string_view rest = text;
  size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    std::string_view digest = rest.substr(at + 1);
    if (!valid_digest(digest)) return bad(text, "digest must be sha256: and 64 lowercase hex digits");
    ref.digest = digest;
    rest = rest.substr(0, at);
  }
  size_t slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    std::string_view tag = rest.substr(colon + 1);
    if (!valid_tag(tag)) return bad(text, "invalid tag \"" + std::string(tag) + "\"");
    ref.tag = tag;
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad(text, "no repository");

  size_t first = rest.find('/');
  std::string_view head = rest.substr(0, first);
  if (first != std::string_view::npos &&
      (head.find('.') != std::string_view::npos || head.find(':') != std::string_view::npos ||
       head == "localhost" || head.front() == '[')) {
    if (!valid_registry(head)) return bad(text, "invalid registry \"" + std::string(head) + "\"");
    ref.registry = head;
    rest = rest.substr(first + 1);
  } else {
    ref.registry = kDockerHub;
  }
  if (ref.registry == "index.docker.io" || ref.registry == "registry-1.docker.io")
    ref.registry = kDockerHub;
  if (rest.empty()) return bad(text, "no repository");
  if (rest.size() > kMaxRepository) return bad(text, "repository name longer than 255");

  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t next = rest.find('/', pos);
    if (next == std::string_view::npos) next = rest.size();
    std::string_view comp = rest.substr(pos, next - pos);
    if (!valid_repo_component(comp))
      return bad(text, comp.empty() ? "empty path component"
                                    : "repository component \"" + std::string(comp) +
                                          "\" must be lowercase letters, digits and . _ __ -");
    pos = next + 1;
  }
  ref.repository = rest;
  if (ref.registry == kDockerHub && ref.repository.find('/') == std::string::npos)
    ref.repository = "library/" + ref.repository;
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

}  // namespace kern::oci
