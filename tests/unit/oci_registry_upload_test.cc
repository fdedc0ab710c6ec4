// The pure pieces of a push (oci/registry_upload.h): chunk ranges, where an upload goes on
// (Location, relative or absolute), query parameters, token scopes, the registry's error words
// and the chunk size from the environment.
#include <gtest/gtest.h>

#include <cstdlib>

#include "oci/registry_upload.h"

namespace kern::oci {
namespace {

TEST(OciRegistryUpload, ContentRangeNamesFirstAndLastByteInclusive) {
  EXPECT_EQ(content_range(0, 1), "0-0");
  EXPECT_EQ(content_range(0, 8388608), "0-8388607");
  EXPECT_EQ(content_range(8388608, 100), "8388608-8388707");
}

TEST(OciRegistryUpload, LocationResolvesAgainstTheRequestUrl) {
  const std::string post = "https://reg.example:5000/v2/a/b/blobs/uploads/";
  EXPECT_EQ(*resolve_location(post, "/v2/a/b/blobs/uploads/u1?_state=x"),
            "https://reg.example:5000/v2/a/b/blobs/uploads/u1?_state=x");
  EXPECT_EQ(*resolve_location(post, "https://storage.example/up/1"), "https://storage.example/up/1");
  EXPECT_EQ(*resolve_location(post, "HTTP://127.0.0.1:5000/x"), "HTTP://127.0.0.1:5000/x");
  EXPECT_EQ(*resolve_location(post, "//other.example/up"), "https://other.example/up");
  EXPECT_EQ(*resolve_location("https://r.example/v2/a/blobs/uploads/u1?_state=q", "u2?s=1"),
            "https://r.example/v2/a/blobs/uploads/u2?s=1");
  EXPECT_EQ(*resolve_location("http://localhost:5000", "/v2/x"), "http://localhost:5000/v2/x");
  EXPECT_FALSE(resolve_location("not a url", "/v2/x"));
}

TEST(OciRegistryUpload, QueryParameterJoinsWithQuestionMarkOrAmpersand) {
  EXPECT_EQ(with_query("https://r/v2/a/blobs/uploads/u", "digest=sha256:ab"),
            "https://r/v2/a/blobs/uploads/u?digest=sha256:ab");
  EXPECT_EQ(with_query("https://r/v2/a/blobs/uploads/u?_state=s", "digest=sha256:ab"),
            "https://r/v2/a/blobs/uploads/u?_state=s&digest=sha256:ab");
}

TEST(OciRegistryUpload, ScopesNameRepositoryAndActions) {
  EXPECT_EQ(repository_scope("library/busybox", "pull,push"), "repository:library/busybox:pull,push");
  EXPECT_EQ(repository_scope("team/app", "pull"), "repository:team/app:pull");
}

TEST(OciRegistryUpload, RegistryErrorBodyIsPutInWords) {
  EXPECT_EQ(registry_error_text(R"({"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]})"),
            "DENIED: requested access to the resource is denied");
  EXPECT_EQ(registry_error_text(R"({"errors":[{"code":"BLOB_UPLOAD_INVALID"}]})"), "BLOB_UPLOAD_INVALID");
  EXPECT_EQ(registry_error_text("<html>502</html>"), "");
  EXPECT_EQ(registry_error_text(R"({"errors":[]})"), "");
}

TEST(OciRegistryUpload, ChunkSizeIsEightMiBUnlessTheEnvironmentSaysOtherwise) {
  ::unsetenv("KERN_PUSH_CHUNK");
  EXPECT_EQ(push_chunk_size(), 8 << 20);
  ::setenv("KERN_PUSH_CHUNK", "4096", 1);
  EXPECT_EQ(push_chunk_size(), 4096);
  for (const char* bad : {"0", "-5", "12k", ""}) {
    ::setenv("KERN_PUSH_CHUNK", bad, 1);
    EXPECT_EQ(push_chunk_size(), 8 << 20) << bad;
  }
  ::unsetenv("KERN_PUSH_CHUNK");
}

}  // namespace
}  // namespace kern::oci
