// How the registry client talks TLS to one host, in the containers conventions that Podman,
// Buildah and Skopeo share (containers-certs.d(5)): extra CA certificates and a client
// certificate from a per-host directory, SSL_CERT_FILE / SSL_CERT_DIR for the trust store,
// verification switched off only for a host named by --tls-verify=false or `insecure = true` in
// registries.conf. Any process, before clone.
//
//   --cert-dir DIR                                  used alone when given, else the first of
//   $XDG_CONFIG_HOME/containers/certs.d/HOST[:PORT]  (else ~/.config/containers/certs.d/...)
//   /etc/containers/certs.d/HOST[:PORT]
//   /etc/docker/certs.d/HOST[:PORT]                 that exists.
// In that directory every *.crt is a CA added to the system's (never replacing it), and a
// NAME.cert with its NAME.key is the client certificate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::oci {

// What the command line asked for (pull, login).
struct TlsRequest {
  std::optional<bool> verify;  // --tls-verify; unset: verify unless registries.conf says insecure
  std::string cert_dir;        // --cert-dir
};

struct TlsSettings {
  bool verify = true;
  std::string ca_pem;                 // the *.crt files, concatenated; added to the trust store
  std::vector<std::string> ca_files;  // their paths, for messages
  std::string client_cert, client_key;
  std::string ca_file, ca_path;       // SSL_CERT_FILE, SSL_CERT_DIR: replace the default store
  std::string cert_dir;               // the directory used, or empty
};

// The certificate directories searched for `host` ("quay.io", "127.0.0.1:5000"), in order.
std::vector<std::string> cert_dirs_for(const std::string& host);

// The settings for `host`. `insecure` is registries.conf's word for it; an explicit
// --tls-verify wins over it. A --cert-dir that does not exist, or a *.cert without its *.key,
// is an error.
Result<TlsSettings> tls_settings_for(const std::string& host, const TlsRequest& req, bool insecure);

// A TLS failure (curl's code and its error text) as words and a hint naming the ways out, or
// nullopt when `curl_code` is not about certificates.
std::optional<Error> describe_tls_failure(int curl_code, const std::string& host, const std::string& url,
                                          const std::string& detail, const TlsSettings& tls);

}  // namespace kern::oci
