// Challenges, base64 and the credentials file; see auth.h.
#include "oci/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "oci/reference.h"
#include "oci/url_policy.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::oci {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

Result<nlohmann::json> read_auth_file() {
  std::string path = auth_file_path();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return nlohmann::json::object();
    return fail_errno("open \"" + path + "\"", ErrorKind::config);
  }
  UniqueFd f(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail_errno("fstat \"" + path + "\"", ErrorKind::config);
  if ((st.st_mode & 077) != 0 || st.st_uid != ::getuid())
    return fail(Error(ErrorKind::config, EPERM, "credentials file \"" + path + "\" is open to other users")
                    .with_hint("chmod 600 " + path));
  KERN_TRY_ASSIGN(std::string text, sys::read_all(fd, 1 << 20, path));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail(ErrorKind::config, 0, "\"" + path + "\" is not a JSON object");
  return j;
}

Status write_auth_file(const nlohmann::json& j) {
  std::string path = auth_file_path();
  std::string dir = path.substr(0, path.rfind('/'));
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + prefix + "\"", ErrorKind::config);
  }
  std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail_errno("open \"" + tmp + "\"", ErrorKind::config);
  UniqueFd f(fd);
  KERN_TRY(sys::write_all(fd, j.dump(2) + "\n", tmp));
  if (::fsync(fd) != 0) return fail_errno("fsync \"" + tmp + "\"", ErrorKind::config);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail_errno("rename \"" + path + "\"", ErrorKind::config);
  return {};
}

}  // namespace

Result<Challenge> parse_www_authenticate(std::string_view v) {
  Challenge c;
  size_t i = 0;
  auto skip_ws = [&] {
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
  };
  skip_ws();
  size_t start = i;
  while (i < v.size() && v[i] != ' ' && v[i] != '\t') ++i;
  c.scheme = ascii_lower(v.substr(start, i - start));
  if (c.scheme.empty()) return fail(ErrorKind::image, 0, "empty WWW-Authenticate header");
  for (;;) {
    skip_ws();
    while (i < v.size() && v[i] == ',') ++i;
    skip_ws();
    if (i >= v.size()) break;
    size_t ks = i;
    while (i < v.size() && v[i] != '=' && v[i] != ',' && v[i] != ' ') ++i;
    std::string key = ascii_lower(v.substr(ks, i - ks));
    skip_ws();
    if (i >= v.size() || v[i] != '=') break;  // a second challenge or a token68: stop
    ++i;
    skip_ws();
    std::string value;
    if (i < v.size() && v[i] == '"') {
      ++i;
      while (i < v.size() && v[i] != '"') {
        if (v[i] == '\\' && i + 1 < v.size()) ++i;
        value += v[i++];
      }
      if (i >= v.size()) return fail(ErrorKind::image, 0, "unterminated quote in WWW-Authenticate header");
      ++i;
    } else {
      size_t vs = i;
      while (i < v.size() && v[i] != ',' && v[i] != ' ') ++i;
      value = std::string(v.substr(vs, i - vs));
    }
    c.params[key] = value;
  }
  return c;
}

std::string base64_encode(std::string_view data) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned n = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8) |
                 static_cast<unsigned char>(data[i + 2]);
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += kB64[(n >> 6) & 63];
    out += kB64[n & 63];
  }
  if (i + 1 == data.size()) {
    unsigned n = static_cast<unsigned char>(data[i]) << 16;
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    unsigned n = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8);
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += kB64[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (char c : text) {
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad) return fail(ErrorKind::config, 0, "invalid base64");
    const char* p = std::char_traits<char>::find(kB64, 64, c);
    if (p == nullptr) return fail(ErrorKind::config, 0, "invalid base64");
    acc = (acc << 6) | static_cast<unsigned>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (pad > 2 || (text.size() % 4) != 0) return fail(ErrorKind::config, 0, "invalid base64");
  return out;
}

std::string auth_file_path() {
  const char* x = std::getenv("XDG_CONFIG_HOME");
  if (x && *x) return std::string(x) + "/kern/auth.json";
  return paths::home_dir() + "/.config/kern/auth.json";
}

Result<std::optional<Credentials>> load_credentials(const std::string& registry) {
  KERN_TRY_ASSIGN(nlohmann::json j, read_auth_file());
  auto auths = j.find("auths");
  if (auths == j.end() || !auths->is_object()) return std::optional<Credentials>();
  auto e = auths->find(registry);
  if (e == auths->end() || !e->is_object() || !e->contains("auth") || !(*e)["auth"].is_string())
    return std::optional<Credentials>();
  KERN_TRY_ASSIGN(std::string pair, base64_decode((*e)["auth"].get<std::string>()));
  size_t colon = pair.find(':');
  if (colon == std::string::npos) return fail(ErrorKind::config, 0, "credentials for " + registry + " are malformed");
  return std::optional<Credentials>(Credentials{pair.substr(0, colon), pair.substr(colon + 1)});
}

Status store_credentials(const std::string& registry, const Credentials& creds) {
  KERN_TRY_ASSIGN(nlohmann::json j, read_auth_file());
  if (!j.contains("auths") || !j["auths"].is_object()) j["auths"] = nlohmann::json::object();
  j["auths"][registry] = {{"auth", base64_encode(creds.user + ":" + creds.password)}};
  return write_auth_file(j);
}

Result<bool> remove_credentials(const std::string& registry) {
  KERN_TRY_ASSIGN(nlohmann::json j, read_auth_file());
  if (!j.contains("auths") || !j["auths"].is_object() || !j["auths"].contains(registry)) return false;
  j["auths"].erase(registry);
  KERN_TRY(write_auth_file(j));
  return true;
}

Result<std::vector<std::string>> remove_all_credentials() {
  KERN_TRY_ASSIGN(nlohmann::json j, read_auth_file());
  std::vector<std::string> had;
  if (!j.contains("auths") || !j["auths"].is_object()) return had;
  for (const auto& [k, v] : j["auths"].items()) had.push_back(k);
  if (had.empty()) return had;
  j["auths"] = nlohmann::json::object();
  KERN_TRY(write_auth_file(j));
  return had;
}

Result<std::string> registry_host_arg(const std::string& text) {
  auto probe = parse_reference(text + "/kern-login-probe");
  if (!probe || probe->kind != Reference::Kind::registry || (probe->registry == kDockerHub && text != "docker.io"))
    return fail(ErrorKind::usage, 0, "\"" + text + "\" is not a registry host (like localhost:5000 or quay.io)");
  return probe->registry;
}

}  // namespace kern::oci
