// TLS settings per registry host; see registry_tls.h.
#include "oci/registry_tls.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <curl/curl.h>

#include "runtime/sys/env.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::oci {
namespace {

constexpr size_t kCertLimit = 1 << 20;

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Result<std::vector<std::string>> sorted_entries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return fail_errno("opendir \"" + dir + "\"", ErrorKind::config);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> cert_dirs_for(const std::string& host) {
  std::string xdg = sys::env_value("XDG_CONFIG_HOME");
  std::string user = (xdg.empty() ? paths::home_dir() + "/.config" : xdg) + "/containers/certs.d/";
  return {user + host, "/etc/containers/certs.d/" + host, "/etc/docker/certs.d/" + host};
}

Result<TlsSettings> tls_settings_for(const std::string& host, const TlsRequest& req, bool insecure) {
  TlsSettings t;
  t.verify = req.verify.value_or(!insecure);
  t.ca_file = sys::env_value("SSL_CERT_FILE");
  t.ca_path = sys::env_value("SSL_CERT_DIR");
  if (!req.cert_dir.empty()) {
    if (!is_dir(req.cert_dir))
      return fail(Error(ErrorKind::usage, ENOENT, "--cert-dir \"" + req.cert_dir + "\" is not a directory"));
    t.cert_dir = req.cert_dir;
  } else {
    for (const auto& d : cert_dirs_for(host))
      if (is_dir(d)) {
        t.cert_dir = d;
        break;
      }
  }
  if (t.cert_dir.empty()) return t;
  KERN_TRY_ASSIGN(auto names, sorted_entries(t.cert_dir));
  for (const auto& n : names) {
    std::string path = t.cert_dir + "/" + n;
    if (ends_with(n, ".crt")) {
      KERN_TRY_ASSIGN(std::string pem, sys::read_file(AT_FDCWD, path, kCertLimit));
      t.ca_pem += pem;
      if (!pem.empty() && pem.back() != '\n') t.ca_pem += '\n';
      t.ca_files.push_back(path);
    } else if (ends_with(n, ".cert") && t.client_cert.empty()) {
      std::string key = t.cert_dir + "/" + n.substr(0, n.size() - 5) + ".key";
      if (::access(key.c_str(), R_OK) != 0)
        return fail(Error(ErrorKind::config, ENOENT, "client certificate \"" + path + "\" has no key \"" + key + "\"")
                        .with_hint("a NAME.cert in a certificate directory needs its NAME.key next to it"));
      t.client_cert = path;
      t.client_key = key;
    }
  }
  return t;
}

std::optional<Error> describe_tls_failure(int curl_code, const std::string& host, const std::string& url,
                                          const std::string& detail, const TlsSettings& tls) {
  std::string what;
  bool handshake = false;  // the connection failed, not a certificate check
  switch (curl_code) {
    case CURLE_PEER_FAILED_VERIFICATION:
      what = "the TLS certificate of " + host + " could not be verified";
      break;
    case CURLE_SSL_CACERT_BADFILE:
      what = "the CA certificates for " + host + " could not be loaded";
      break;
    case CURLE_SSL_CERTPROBLEM:
      what = "the client certificate for " + host + " could not be used";
      break;
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      what = "the TLS certificate of " + host + " was refused";
      break;
    case CURLE_SSL_CONNECT_ERROR:
      what = "the TLS handshake with " + host + " failed";
      handshake = true;
      break;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      // A TLS 1.3 server that wants a client certificate says so after the handshake, as an
      // alert on the first read.
      if (detail.find("SSL") == std::string::npos) return std::nullopt;
      what = "the TLS connection with " + host + " failed";
      handshake = true;
      break;
    default:
      return std::nullopt;
  }
  std::string msg = "GET " + url + ": " + what;
  if (!detail.empty()) msg += " (" + detail + ")";
  std::vector<std::string> dirs = cert_dirs_for(host);
  std::string hint;
  if (!tls.cert_dir.empty()) hint = "the certificates came from " + tls.cert_dir + "; ";
  if (handshake)
    hint += "if " + host + " serves plain HTTP, --tls-verify=false (or insecure = true in registries.conf) allows it; "
            "a client certificate it asks for goes in " + dirs[0] + " or --cert-dir DIR";
  else
    hint += "put the registry's CA in " + dirs[0] + "/ca.crt or " + dirs[1] +
            "/ca.crt, or pass --cert-dir DIR; --tls-verify=false skips the check (insecure)";
  Error e(ErrorKind::image, 0, std::move(msg));
  return std::move(e).with_code("curl", curl_code).with_hint(std::move(hint));
}

}  // namespace kern::oci
