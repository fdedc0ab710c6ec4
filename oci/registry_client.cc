// The OCI distribution client; see registry_client.h.
#include "oci/registry_client.h"

#include <time.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "oci/dl/curl_api.h"
#include "oci/manifest.h"
#include "oci/url_policy.h"

namespace kern::oci {
namespace {

constexpr size_t kMaxBody = 4 << 20;  // manifests, tokens, error bodies
constexpr int kAttempts = 4;
constexpr int kMaxRedirects = 10;

void backoff(int attempt) {
  struct timespec ts {0, 250'000'000L << attempt};
  while (ts.tv_nsec >= 1'000'000'000L) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1'000'000'000L;
  }
  ::nanosleep(&ts, nullptr);
}

bool transient_curl(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool transient_http_status(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

struct RegistryClient::Sink {
  std::function<bool(const char*, size_t)> write;
  std::function<void()> restart;
  int64_t limit = -1;
  int64_t got = 0;
  bool over = false;
};

namespace {
struct Transfer {
  HttpResponse* resp;
  RegistryClient* self;
  void* sink;  // RegistryClient::Sink*
  long current_status = 0;
  bool aborted = false;
};
}  // namespace

RegistryClient::~RegistryClient() {
  if (curl_ != nullptr) {
    auto api = dl::curl_api();
    if (api) (*api)->easy_cleanup(static_cast<CURL*>(curl_));
  }
}

Result<std::unique_ptr<RegistryClient>> RegistryClient::create(const Reference& ref, ClientOptions opts) {
  KERN_TRY_ASSIGN(const dl::CurlApi* api, dl::curl_api());
  std::unique_ptr<RegistryClient> c(new RegistryClient());
  c->ref_ = ref;
  c->host_ = ref.registry == kDockerHub ? std::string("registry-1.docker.io") : ref.registry;
  c->loopback_ = ref.loopback_registry();
  c->opts_ = std::move(opts);
  if (!c->opts_.tls.verify && !c->loopback_) c->plain_http_host_ = c->host_;
  c->base_ = "https://" + c->host_ + "/v2/";
  KERN_TRY_ASSIGN(c->creds_, load_credentials(ref.registry));
  c->curl_ = api->easy_init();
  if (c->curl_ == nullptr) return fail(ErrorKind::internal, ENOMEM, "curl_easy_init");
  return c;
}

// Redirects are followed here, not by libcurl, so that each hop is judged by the URL policy
// before anything is sent to it, and the Authorization header goes only to the origin it was
// meant for (blob storage behind a redirect gets no registry token or password).
Result<HttpResponse> RegistryClient::perform(const std::string& first_url, const Call& call, Sink* sink,
                                             std::string_view role, bool send_auth) {
  std::string url = first_url;
  // A push's request with a body is never sent on to a redirect.
  bool follow = call.method == "GET" || call.method == "HEAD";
  for (int hop = 0;; ++hop) {
    KERN_TRY(check_fetch_url(url, hop == 0 ? role : std::string_view("a redirect"), plain_http_host_));
    KERN_TRY_ASSIGN(HttpResponse resp, perform_once(url, call, sink, send_auth));
    resp.url = url;
    bool redirect = resp.status == 301 || resp.status == 302 || resp.status == 303 || resp.status == 307 ||
                    resp.status == 308;
    if (!follow || !redirect || resp.redirect_url.empty()) return resp;
    if (hop + 1 > kMaxRedirects)
      return fail(ErrorKind::image, ELOOP, std::string(call.method) + " " + first_url + ": more than " +
                                               std::to_string(kMaxRedirects) + " redirects");
    if (!same_origin(url, resp.redirect_url)) send_auth = false;
    url = resp.redirect_url;
  }
}

Result<HttpResponse> RegistryClient::perform_once(const std::string& url, const Call& call, Sink* sink,
                                                  bool send_auth) {
  KERN_TRY_ASSIGN(const dl::CurlApi* api, dl::curl_api());
  CURL* h = static_cast<CURL*>(curl_);
  api->easy_reset(h);
  HttpResponse resp;
  Transfer t{&resp, this, sink};
  auto header_cb = +[](char* buf, size_t size, size_t n, void* ud) -> size_t {
    auto* tr = static_cast<Transfer*>(ud);
    std::string line(buf, size * n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.rfind("HTTP/", 0) == 0) {
      // A new response (after a 100 Continue): headers start over.
      tr->resp->headers.clear();
      size_t sp = line.find(' ');
      tr->current_status = sp == std::string::npos ? 0 : std::strtol(line.c_str() + sp + 1, nullptr, 10);
      return size * n;
    }
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      size_t b = value.find_first_not_of(" \t");
      tr->resp->headers[ascii_lower(line.substr(0, colon))] = b == std::string::npos ? "" : value.substr(b);
    }
    return size * n;
  };
  auto write_cb = +[](char* buf, size_t size, size_t n, void* ud) -> size_t {
    auto* tr = static_cast<Transfer*>(ud);
    size_t len = size * n;
    auto* s = static_cast<Sink*>(tr->sink);
    bool ok_status = tr->current_status >= 200 && tr->current_status < 300;
    if (s != nullptr && ok_status) {
      s->got += static_cast<int64_t>(len);
      if (s->limit >= 0 && s->got > s->limit) {
        s->over = true;
        return 0;
      }
      if (!s->write(buf, len)) {
        tr->aborted = true;
        return 0;
      }
      return len;
    }
    if (tr->resp->body.size() + len > kMaxBody) return 0;
    tr->resp->body.append(buf, len);
    return len;
  };
  // The caller checked this URL against the policy; curl is held to its scheme and follows nothing.
  auto parts = split_url(url);
  bool plain_http = !parts || parts->scheme != "https";
  const char* protocols = plain_http ? "http" : "https";
  api->easy_setopt(h, CURLOPT_URL, url.c_str());
  api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, protocols);
  api->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
  api->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  // Plain HTTP (loopback, or a host marked insecure) never goes through a proxy from the
  // environment, which would carry the request, credentials included, on in clear text.
  if (plain_http) api->easy_setopt(h, CURLOPT_NOPROXY, "*");
  api->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 20L);
  api->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
  api->easy_setopt(h, CURLOPT_USERAGENT, "kern/0.1");
  char errbuf[CURL_ERROR_SIZE] = {0};
  api->easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  const TlsSettings& tls = opts_.tls;
  if (!tls.verify) {
    api->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    api->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!tls.ca_file.empty()) api->easy_setopt(h, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.ca_path.empty()) api->easy_setopt(h, CURLOPT_CAPATH, tls.ca_path.c_str());
  // Added to the trust store (libcurl loads the blob and its CA file both), never replacing it.
  struct curl_blob ca_blob {const_cast<char*>(tls.ca_pem.data()), tls.ca_pem.size(), CURL_BLOB_NOCOPY};
  if (!tls.ca_pem.empty()) api->easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca_blob);
  if (!tls.client_cert.empty()) {
    api->easy_setopt(h, CURLOPT_SSLCERT, tls.client_cert.c_str());
    api->easy_setopt(h, CURLOPT_SSLKEY, tls.client_key.c_str());
  }
  api->easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
  api->easy_setopt(h, CURLOPT_HEADERDATA, &t);
  api->easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
  api->easy_setopt(h, CURLOPT_WRITEDATA, &t);
  struct curl_slist* headers = nullptr;
  if (call.method == "HEAD") {
    api->easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (call.method != "GET") {
    // The body is sent from memory, with its length; PATCH and PUT are POSTs renamed.
    api->easy_setopt(h, CURLOPT_POST, 1L);
    api->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.body.size()));
    api->easy_setopt(h, CURLOPT_POSTFIELDS, call.body.empty() ? "" : call.body.data());
    if (call.method != "POST") api->easy_setopt(h, CURLOPT_CUSTOMREQUEST, std::string(call.method).c_str());
    // No "Expect: 100-continue" wait, and no form content type unless the caller names one.
    headers = api->slist_append(headers, "Expect:");
    bool typed = false;
    if (call.headers)
      for (const auto& line : *call.headers) typed = typed || ascii_lower(line).rfind("content-type:", 0) == 0;
    if (!typed) headers = api->slist_append(headers, "Content-Type:");
  }
  if (call.headers)
    for (const auto& line : *call.headers) headers = api->slist_append(headers, line.c_str());
  if (!call.accept.empty()) headers = api->slist_append(headers, call.accept.c_str());
  if (send_auth && !authorization_.empty()) headers = api->slist_append(headers, ("Authorization: " + authorization_).c_str());
  if (headers) api->easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = api->easy_perform(h);
  if (headers) api->slist_free_all(headers);
  api->easy_setopt(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
  last_detail_ = errbuf;
  if (rc != CURLE_OK) {
    if (sink != nullptr && sink->over)
      return fail(ErrorKind::image, EFBIG, "GET " + url + ": more data than the manifest declared");
    if (t.aborted) return fail(ErrorKind::image, EIO, "GET " + url + ": writing the blob failed");
    return fail(Error(ErrorKind::image, 0, std::string(call.method) + " " + url + ": " + api->easy_strerror(rc))
                    .with_code("curl", rc));
  }
  long status = 0;
  api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  resp.status = status;
  char* location = nullptr;
  if (api->easy_getinfo(h, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != nullptr)
    resp.redirect_url = location;
  return resp;
}

Result<HttpResponse> RegistryClient::request(const std::string& target, const Call& call, Sink* sink) {
  bool authed = false;
  bool absolute = target.rfind("https://", 0) == 0 || target.rfind("http://", 0) == 0;
  for (int attempt = 0;; ++attempt) {
    if (sink != nullptr && sink->got > 0) {
      sink->got = 0;
      if (sink->restart) sink->restart();
    }
    std::string url = absolute ? target : base_ + target;
    // An upload's Location may name another origin: that gets no Authorization.
    auto r = perform(url, call, sink, absolute ? "an upload location" : "the registry URL",
                     !absolute || same_origin(url, base_));
    if (!r) {
      if (r.error().code_domain() != "curl") return r;  // not curl's failure: ours
      CURLcode rc = static_cast<CURLcode>(r.error().code());
      auto tls_failure = plain_http_ ? std::nullopt
                                     : describe_tls_failure(rc, host_, url, last_detail_, opts_.tls);
      // A registry without TLS: plain HTTP for a loopback host, or one the user marked
      // insecure (never for other hosts). A server that spoke TLS (a certificate that fails
      // verification, an alert after the handshake) is not a registry without TLS.
      bool spoke_tls = tls_failure && rc != CURLE_SSL_CONNECT_ERROR;
      bool may_fall_back = (loopback_ || !plain_http_host_.empty()) && !spoke_tls;
      if (may_fall_back && !absolute && !plain_http_ && (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_RECV_ERROR ||
                                            rc == CURLE_GOT_NOTHING || rc == CURLE_COULDNT_CONNECT)) {
        if (tls_failure) tls_error_ = std::move(tls_failure);
        plain_http_ = true;
        base_ = "http://" + host_ + "/v2/";
        continue;
      }
      if (tls_failure) return fail(std::move(*tls_failure));
      if (tls_error_ && rc != CURLE_COULDNT_CONNECT) return fail(Error(*tls_error_));
      if (call.retry && transient_curl(rc) && attempt + 1 < kAttempts) {
        backoff(attempt);
        continue;
      }
      Error e(ErrorKind::image, 0, r.error().message());
      return fail(std::move(e));
    }
    // A TLS server whose handshake failed (a client certificate it wanted, TLS 1.2) may answer
    // the plain-HTTP fallback on the same port with 400 "Client sent an HTTP request to an
    // HTTPS server" (Go's net/http): the reason worth telling is why TLS failed.
    if (plain_http_ && tls_error_ && r->status == 400 && r->body.find("HTTPS server") != std::string::npos)
      return fail(Error(*tls_error_));
    if (r->status == 401 && !authed) {
      authed = true;
      auto it = r->headers.find("www-authenticate");
      if (it == r->headers.end())
        return fail(ErrorKind::image, EACCES,
                    std::string(call.method) + " " + url + ": 401 without a WWW-Authenticate challenge");
      KERN_TRY(authenticate(it->second));
      --attempt;
      continue;
    }
    if (call.retry && transient_http_status(r->status) && attempt + 1 < kAttempts) {
      backoff(attempt);
      continue;
    }
    return r;
  }
}

Status RegistryClient::authenticate(const std::string& header) {
  KERN_TRY_ASSIGN(Challenge c, parse_www_authenticate(header));
  std::string basic = creds_ ? "Basic " + base64_encode(creds_->user + ":" + creds_->password) : std::string();
  if (c.scheme == "basic") {
    if (!creds_)
      return fail(Error(ErrorKind::image, EACCES, ref_.registry + " requires credentials")
                      .with_hint("run 'kern login " + ref_.registry + "'"));
    authorization_ = basic;
    return {};
  }
  if (c.scheme != "bearer") return fail(ErrorKind::image, EACCES, "unsupported authentication scheme \"" + c.scheme + "\"");
  std::string realm = c.params["realm"];
  // Judged on its own: a loopback registry does not make a plain-HTTP realm elsewhere safe for
  // the password.
  KERN_TRY(check_fetch_url(realm, "the token realm of " + ref_.registry));
  KERN_TRY_ASSIGN(const dl::CurlApi* api, dl::curl_api());
  auto esc = [&](const std::string& s) {
    char* e = api->easy_escape(static_cast<CURL*>(curl_), s.c_str(), static_cast<int>(s.size()));
    std::string out = e ? e : "";
    api->free(e);
    return out;
  };
  std::string url = realm + (realm.find('?') == std::string::npos ? "?" : "&");
  if (!c.params["service"].empty()) url += "service=" + esc(c.params["service"]) + "&";
  if (!ref_.repository.empty()) url += "scope=" + esc("repository:" + ref_.repository + ":" + opts_.actions);
  for (const auto& s : extra_scopes_) url += "&scope=" + esc(s);
  authorization_ = basic;
  HttpResponse resp;
  for (int attempt = 0;; ++attempt) {
    auto r = perform(url, Call{}, nullptr, "the token realm", true);
    if (r && transient_http_status(r->status) && attempt + 1 < kAttempts) {
      backoff(attempt);
      continue;
    }
    if (!r) return fail(std::move(r).error().with_context("fetching a registry token"));
    resp = std::move(*r);
    break;
  }
  if (resp.status == 401 || resp.status == 403)
    return fail(Error(ErrorKind::image, EACCES, "the token service of " + ref_.registry + " refused " +
                                                    (creds_ ? "the stored credentials" : "anonymous access"))
                    .with_hint("run 'kern login " + ref_.registry + "'"));
  if (resp.status != 200)
    return fail(ErrorKind::image, 0, "token service " + realm + " answered HTTP " + std::to_string(resp.status));
  auto j = nlohmann::json::parse(resp.body, nullptr, false);
  std::string token;
  if (j.is_object()) {
    if (j.contains("token") && j["token"].is_string()) token = j["token"];
    else if (j.contains("access_token") && j["access_token"].is_string()) token = j["access_token"];
  }
  if (token.empty()) return fail(ErrorKind::image, 0, "token service " + realm + " gave no token");
  authorization_ = "Bearer " + token;
  return {};
}

Result<HttpResponse> RegistryClient::get_manifest(const std::string& reference) {
  Call call;
  call.accept = manifest_accept_header();
  KERN_TRY_ASSIGN(HttpResponse r, request(ref_.repository + "/manifests/" + reference, call, nullptr));
  std::string what = ref_.registry + "/" + ref_.repository + ":" + reference;
  if (r.status == 404)
    return fail(Error(ErrorKind::image, 0, "manifest unknown: " + what + " is not in the registry (HTTP 404)")
                    .with_hint("check the name and tag; 'kern images' lists what is stored here"));
  if (r.status == 401 || r.status == 403)
    return fail(Error(ErrorKind::image, EACCES, "access to " + what + " denied (HTTP " + std::to_string(r.status) + ")")
                    .with_hint("run 'kern login " + ref_.registry + "' if the repository is private"));
  if (r.status != 200)
    return fail(ErrorKind::image, 0, "GET manifest " + what + ": HTTP " + std::to_string(r.status));
  return r;
}

Status RegistryClient::get_blob(const std::string& digest, int64_t expected_size,
                                const std::function<bool(const char*, size_t)>& sink,
                                const std::function<void()>& restart) {
  Sink s{sink, restart, expected_size};
  KERN_TRY_ASSIGN(HttpResponse r, request(ref_.repository + "/blobs/" + digest, Call{}, &s));
  if (r.status != 200)
    return fail(ErrorKind::image, 0,
                "GET blob " + digest + " from " + ref_.name() + ": HTTP " + std::to_string(r.status));
  if (expected_size >= 0 && s.got != expected_size)
    return fail(ErrorKind::image, EIO, "blob " + digest + ": got " + std::to_string(s.got) + " bytes, expected " +
                                           std::to_string(expected_size));
  return {};
}

Result<HttpResponse> RegistryClient::send(const HttpRequest& req) {
  Call call;
  call.method = req.method;
  call.headers = &req.headers;
  call.body = req.body;
  call.retry = req.retry;
  return request(req.target, call, nullptr);
}

void RegistryClient::add_scope(const std::string& scope) {
  for (const auto& s : extra_scopes_)
    if (s == scope) return;
  extra_scopes_.push_back(scope);
  if (authorization_.rfind("Bearer ", 0) == 0) authorization_.clear();
}

Status RegistryClient::check_login() {
  KERN_TRY_ASSIGN(HttpResponse r, request("", Call{}, nullptr));
  if (r.status == 200) return {};
  if (r.status == 401 || r.status == 403)
    return fail(ErrorKind::image, EACCES, "login to " + ref_.registry + " failed (HTTP " + std::to_string(r.status) + ")");
  return fail(ErrorKind::image, 0, base_ + ": HTTP " + std::to_string(r.status));
}

}  // namespace kern::oci
