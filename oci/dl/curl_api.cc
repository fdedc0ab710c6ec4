// The libcurl loader; see curl_api.h.
#include "oci/dl/curl_api.h"

#include "oci/dl/dl_library.h"

namespace kern::oci::dl {
namespace {

constexpr const char* kSoname = "libcurl.so.4";

Result<CurlApi> resolve() {
  KERN_TRY_ASSIGN(void* h, open_library(kSoname, "libcurl4"));
  CurlApi api;
  KERN_DL_SYM(h, kSoname, api, global_init, "curl_global_init");
  KERN_DL_SYM(h, kSoname, api, easy_init, "curl_easy_init");
  KERN_DL_SYM(h, kSoname, api, easy_setopt, "curl_easy_setopt");
  KERN_DL_SYM(h, kSoname, api, easy_perform, "curl_easy_perform");
  KERN_DL_SYM(h, kSoname, api, easy_getinfo, "curl_easy_getinfo");
  KERN_DL_SYM(h, kSoname, api, easy_reset, "curl_easy_reset");
  KERN_DL_SYM(h, kSoname, api, easy_cleanup, "curl_easy_cleanup");
  KERN_DL_SYM(h, kSoname, api, easy_strerror, "curl_easy_strerror");
  KERN_DL_SYM(h, kSoname, api, slist_append, "curl_slist_append");
  KERN_DL_SYM(h, kSoname, api, slist_free_all, "curl_slist_free_all");
  KERN_DL_SYM(h, kSoname, api, easy_escape, "curl_easy_escape");
  KERN_DL_SYM(h, kSoname, api, free, "curl_free");
  // Once per process, before any handle (curl_global_init is not thread-safe; this runs inside
  // the function-local static initialiser below, which is).
  CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK)
    return fail(ErrorKind::host_unsupported, 0,
                std::string("curl_global_init: ") + api.easy_strerror(rc));
  return api;
}

}  // namespace

Result<const CurlApi*> curl_api() {
  static const Result<CurlApi> loaded = resolve();
  if (!loaded) return fail(Error(loaded.error()));
  return &*loaded;
}

}  // namespace kern::oci::dl
