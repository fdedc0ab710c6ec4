// Blob and manifest uploads; see registry_upload.h.
#include "oci/registry_upload.h"

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "oci/url_policy.h"

namespace kern::oci {
namespace {

constexpr int64_t kDefaultChunk = 8 << 20;

// The error of an answer that was not the one wanted: names the method, the URL and the
// status, with what the registry said; access refused points at kern login.
Unexpected<Error> http_failure(const RegistryClient& client, std::string_view method, const HttpResponse& r,
                               const std::string& what) {
  std::string msg = what + ": " + std::string(method) + " " + r.url + " answered HTTP " + std::to_string(r.status);
  std::string said = registry_error_text(r.body);
  if (!said.empty()) msg += " (" + said + ")";
  const std::string& host = client.reference().registry;
  if (r.status == 401 || r.status == 403)
    return fail(Error(ErrorKind::image, EACCES, msg)
                    .with_hint("run 'kern login " + host + "' with an account that may push to " +
                               client.reference().repository));
  return fail(ErrorKind::image, 0, msg);
}

Result<std::string> next_location(const HttpResponse& r, const std::string& what) {
  auto it = r.headers.find("location");
  if (it == r.headers.end() || it->second.empty())
    return fail(ErrorKind::image, 0, what + ": " + r.url + " answered HTTP " + std::to_string(r.status) +
                                         " without a Location");
  return resolve_location(r.url, it->second);
}

}  // namespace

int64_t push_chunk_size() {
  const char* env = std::getenv("KERN_PUSH_CHUNK");
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    if (end != nullptr && *end == '\0' && v > 0) return v;
  }
  return kDefaultChunk;
}

std::string content_range(int64_t offset, int64_t length) {
  return std::to_string(offset) + "-" + std::to_string(offset + length - 1);
}

Result<std::string> resolve_location(const std::string& request_url, const std::string& location) {
  std::string lower = ascii_lower(location.substr(0, 8));
  if (lower.rfind("https://", 0) == 0 || lower.rfind("http://", 0) == 0) return location;
  size_t scheme_end = request_url.find("://");
  if (scheme_end == std::string::npos)
    return fail(ErrorKind::image, 0, "cannot resolve Location \"" + location + "\" against \"" + request_url + "\"");
  if (location.rfind("//", 0) == 0) return request_url.substr(0, scheme_end + 1) + location;
  size_t path_start = request_url.find('/', scheme_end + 3);
  std::string origin = path_start == std::string::npos ? request_url : request_url.substr(0, path_start);
  if (!location.empty() && location[0] == '/') return origin + location;
  std::string path = path_start == std::string::npos ? "/" : request_url.substr(path_start);
  path = path.substr(0, path.find_first_of("?#"));
  return origin + path.substr(0, path.rfind('/') + 1) + location;
}

std::string with_query(const std::string& url, const std::string& param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
}

std::string repository_scope(const std::string& repository, const std::string& actions) {
  return "repository:" + repository + ":" + actions;
}

std::string registry_error_text(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("errors") || !j["errors"].is_array() || j["errors"].empty()) return "";
  const auto& e = j["errors"][0];
  if (!e.is_object()) return "";
  std::string code = e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>() : "";
  std::string message = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
  std::string out = code.empty() ? message : message.empty() ? code : code + ": " + message;
  return out.size() > 200 ? out.substr(0, 200) + "..." : out;
}

Result<bool> blob_exists(RegistryClient& client, const std::string& digest) {
  HttpRequest req;
  req.method = "HEAD";
  req.target = client.reference().repository + "/blobs/" + digest;
  KERN_TRY_ASSIGN(HttpResponse r, client.send(req));
  if (r.status == 200) return true;
  if (r.status == 404) return false;
  return http_failure(client, req.method, r, "checking for blob " + digest);
}

Result<UploadStart> start_upload(RegistryClient& client, const std::string& digest, const std::string& from) {
  HttpRequest req;
  req.method = "POST";
  req.target = client.reference().repository + "/blobs/uploads/";
  if (!from.empty()) {
    client.add_scope(repository_scope(from, "pull"));
    req.target += "?mount=" + digest + "&from=" + from;
  }
  KERN_TRY_ASSIGN(HttpResponse r, client.send(req));
  UploadStart out;
  if (!from.empty() && r.status == 201) {
    out.mounted = true;
    return out;
  }
  std::string what = from.empty() ? "starting an upload" : "mounting " + digest + " from " + from;
  if (r.status != 202) return http_failure(client, req.method, r, what);
  KERN_TRY_ASSIGN(out.location, next_location(r, what));
  return out;
}

Status upload_blob(RegistryClient& client, std::string location, const std::string& digest, int64_t size,
                   int64_t chunk, const std::function<Status(int64_t, int64_t, std::string&)>& read,
                   const std::function<void(int64_t)>& sent) {
  std::string buf;
  std::string what = "uploading blob " + digest;
  for (int64_t offset = 0; offset < size;) {
    int64_t n = std::min(chunk, size - offset);
    KERN_TRY(read(offset, n, buf));
    HttpRequest req;
    req.method = "PATCH";
    req.target = location;
    req.headers = {"Content-Type: application/octet-stream", "Content-Range: " + content_range(offset, n)};
    req.body = buf;
    req.retry = false;
    KERN_TRY_ASSIGN(HttpResponse r, client.send(req));
    if (r.status != 202) return http_failure(client, req.method, r, what);
    // The registry says what it has: anything but all we sent is a failed upload.
    auto range = r.headers.find("range");
    if (range != r.headers.end()) {
      std::string have = range->second;
      if (have.rfind("bytes=", 0) == 0) have = have.substr(6);
      if (have != content_range(0, offset + n))
        return fail(ErrorKind::image, EIO, what + ": after " + std::to_string(offset + n) + " bytes " + r.url +
                                               " holds the range " + range->second);
    }
    KERN_TRY_ASSIGN(location, next_location(r, what));
    offset += n;
    if (sent) sent(offset);
  }
  HttpRequest put;
  put.method = "PUT";
  put.target = with_query(location, "digest=" + digest);
  put.headers = {"Content-Type: application/octet-stream"};
  KERN_TRY_ASSIGN(HttpResponse r, client.send(put));
  if (r.status != 201 && r.status != 204) return http_failure(client, put.method, r, what);
  return {};
}

Result<std::string> put_manifest(RegistryClient& client, const std::string& tag, const std::string& body,
                                 const std::string& media_type) {
  HttpRequest req;
  req.method = "PUT";
  req.target = client.reference().repository + "/manifests/" + tag;
  req.headers = {"Content-Type: " + media_type};
  req.body = body;
  KERN_TRY_ASSIGN(HttpResponse r, client.send(req));
  if (r.status != 201 && r.status != 200 && r.status != 204)
    return http_failure(client, req.method, r, "pushing the manifest of " + client.reference().name() + ":" + tag);
  auto it = r.headers.find("docker-content-digest");
  return it == r.headers.end() ? std::string() : it->second;
}

}  // namespace kern::oci
