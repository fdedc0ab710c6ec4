// An OCI distribution (v2) client over libcurl: manifests and blobs of one repository, with the
// WWW-Authenticate challenge flow (anonymous or basic credentials to a token service, scope
// repository:NAME:pull, or pull,push for a push, plus the scopes a cross-repository mount
// adds), stored basic credentials, redirects to blob storage, and retries on
// transient failures. HTTPS, verified as oci/registry_tls.h says; plain HTTP only to a loopback
// host, or to a host the user marked insecure, judged for every URL fetched (oci/url_policy.h).
// Any process, before clone.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::string url;                             // the URL that answered (after redirects)
};

struct ClientOptions {
  TlsSettings tls;  // verify = false: no certificate check, and plain HTTP allowed to this host
  std::string actions = "pull";  // what the token asks to do with the repository ("pull,push")
};

// One request of a push: any method, with headers and a body held in memory.
struct HttpRequest {
  std::string method = "GET";       // GET, HEAD, POST, PATCH, PUT
  std::string target;               // a path under the base ("NAME/blobs/uploads/"), or an
                                    // absolute URL (an upload's Location), judged by the URL policy
  std::vector<std::string> headers;  // "Name: value"
  std::string_view body;
  bool retry = true;  // transient failures are tried again (not for a PATCH: the registry may
                      // have taken the bytes)
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
  // Sends one request (redirects are followed for GET and HEAD only). The Authorization header
  // goes only to the registry's own origin.
  Result<HttpResponse> send(const HttpRequest& req);
  // Asks for this scope too from now on ("repository:OTHER:pull", for a mount): a token already
  // fetched is dropped, so the next request fetches one for every scope.
  void add_scope(const std::string& scope);

  // Uses these credentials instead of the stored ones (kern login checks before storing).
  void set_credentials(Credentials c) {
    creds_ = std::move(c);
    authorization_.clear();
  }
  // Checks that the registry answers /v2/ with these credentials (kern login).
  Status check_login();

  // The base URL in use ("https://host/v2/"), for messages.
  const std::string& base() const { return base_; }
  const Reference& reference() const { return ref_; }

 private:
  RegistryClient() = default;
  struct Sink;
  struct Call {
    std::string_view method = "GET";
    std::string accept;                               // the whole header line, or empty
    const std::vector<std::string>* headers = nullptr;  // more header lines
    std::string_view body;
    bool retry = true;
  };
  Result<HttpResponse> perform(const std::string& url, const Call& call, Sink* sink, std::string_view role,
                               bool send_auth);
  Result<HttpResponse> perform_once(const std::string& url, const Call& call, Sink* sink, bool send_auth);
  Result<HttpResponse> request(const std::string& target, const Call& call, Sink* sink);
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
  std::vector<std::string> extra_scopes_;  // asked for besides repository:NAME:ACTIONS
  void* curl_ = nullptr;
};

// Whether a curl result / HTTP status is worth another try.
bool transient_http_status(long status);

}  // namespace kern::oci
