// An OCI distribution (v2) client over libcurl: manifests and blobs of one repository, with the
// WWW-Authenticate challenge flow (anonymous or basic credentials to a token service, scope
// repository:NAME:pull), stored basic credentials, redirects to blob storage, and retries on
// transient failures. HTTPS, verified as oci/registry_tls.h says; plain HTTP only to a loopback
// host, or to a host the user marked insecure, judged for every URL fetched (oci/url_policy.h).
// Any process, before clone.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "oci/auth.h"
#include "oci/reference.h"
#include "oci/registry_tls.h"
#include "runtime/sys/error.h"

namespace kern::oci {

struct HttpResponse {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lowercased; the last value wins
  std::string redirect_url;                    // a 3xx's Location, made absolute
};

struct ClientOptions {
  TlsSettings tls;  // verify = false: no certificate check, and plain HTTP allowed to this host
};

class RegistryClient {
 public:
  static Result<std::unique_ptr<RegistryClient>> create(const Reference& ref, ClientOptions opts = {});
  ~RegistryClient();

  // GET /v2/NAME/manifests/REFERENCE (a tag or a digest) with the manifest Accept list.
  Result<HttpResponse> get_manifest(const std::string& reference);
  // Streams a blob to `sink` (called with each piece; return false to abort). The caller hashes
  // and stores; on a retry `restart` is called first so it can start over.
  Status get_blob(const std::string& digest, int64_t expected_size,
                  const std::function<bool(const char*, size_t)>& sink, const std::function<void()>& restart);
  // Uses these credentials instead of the stored ones (kern login checks before storing).
  void set_credentials(Credentials c) {
    creds_ = std::move(c);
    authorization_.clear();
  }
  // Checks that the registry answers /v2/ with these credentials (kern login).
  Status check_login();

  // The base URL in use ("https://host/v2/"), for messages.
  const std::string& base() const { return base_; }

 private:
  RegistryClient() = default;
  struct Sink;
  Result<HttpResponse> perform(const std::string& url, const std::string& accept, Sink* sink, std::string_view role);
  Result<HttpResponse> perform_once(const std::string& url, const std::string& accept, Sink* sink, bool send_auth);
  Result<HttpResponse> request(const std::string& url, const std::string& accept, Sink* sink);
  Status authenticate(const std::string& challenge_header);

  Reference ref_;
  std::string host_, base_;
  bool loopback_ = false;
  bool plain_http_ = false;
  ClientOptions opts_;
  std::string plain_http_host_;        // a non-loopback host the user allowed plain HTTP to
  std::string last_detail_;            // curl's error buffer for the last failed transfer
  std::optional<Error> tls_error_;     // why https failed before a plain-HTTP fallback
  std::optional<Credentials> creds_;
  std::string authorization_;  // the header value to send, once known
  void* curl_ = nullptr;
};

// Whether a curl result / HTTP status is worth another try.
bool transient_http_status(long status);

}  // namespace kern::oci
