// The push half of the OCI distribution API, on a RegistryClient opened for pull,push: whether
// a blob is already in the repository (HEAD), a cross-repository mount, a chunked upload (POST,
// then PATCH with Content-Range per chunk, then PUT ?digest=) and the manifest's PUT. Plus the
// pure pieces of that protocol (ranges, Location resolution, scopes), kept apart for tests.
// Any process, before clone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "oci/registry_client.h"
#include "runtime/sys/error.h"

namespace kern::oci {

// Bytes per PATCH: 8 MiB, or KERN_PUSH_CHUNK (bytes, for tests) when it is a positive number.
int64_t push_chunk_size();

// The Content-Range of a chunk: the first and the last byte, inclusive ("0-8388607").
std::string content_range(int64_t offset, int64_t length);

// A Location header made absolute against the URL of the request it answered: absolute URLs
// are kept, "//host/p" takes the scheme, "/p" the scheme and authority, "p" the directory.
Result<std::string> resolve_location(const std::string& request_url, const std::string& location);

// `url` with one more query parameter ("?p" or "&p").
std::string with_query(const std::string& url, const std::string& param);

// "repository:NAME:ACTIONS", the token scope of a repository.
std::string repository_scope(const std::string& repository, const std::string& actions);

// What a registry's error body says ("DENIED: requested access to the resource is denied"),
// or empty.
std::string registry_error_text(const std::string& body);

// HEAD /v2/NAME/blobs/DIGEST: true when the repository has the blob.
Result<bool> blob_exists(RegistryClient& client, const std::string& digest);

// POST /v2/NAME/blobs/uploads/, with ?mount=DIGEST&from=FROM when `from` is given (the client
// then also asks for repository:FROM:pull). `mounted`: the registry linked the blob (201);
// otherwise `location` is where the upload it started goes on.
struct UploadStart {
  bool mounted = false;
  std::string location;
};
Result<UploadStart> start_upload(RegistryClient& client, const std::string& digest = {},
                                 const std::string& from = {});

// Sends `size` bytes, read by `read(offset, length, buffer)`, in PATCHes of `chunk` bytes to
// the upload at `location`, then closes it with PUT ?digest=DIGEST. `sent` is told the bytes
// the registry has taken so far.
Status upload_blob(RegistryClient& client, std::string location, const std::string& digest, int64_t size,
                   int64_t chunk, const std::function<Status(int64_t, int64_t, std::string&)>& read,
                   const std::function<void(int64_t)>& sent);

// PUT /v2/NAME/manifests/TAG with these exact bytes and media type. Returns the registry's
// Docker-Content-Digest, or empty when it sent none.
Result<std::string> put_manifest(RegistryClient& client, const std::string& tag, const std::string& body,
                                 const std::string& media_type);

}  // namespace kern::oci
