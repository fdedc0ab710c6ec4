// libcurl, opened with dlopen on first use ("libcurl.so.4", Debian package libcurl4), for the
// registry client. curl_global_init runs once, when the library is loaded.
#pragma once

#include <curl/curl.h>

#include "runtime/sys/error.h"

namespace kern::oci::dl {

// curl.h defines curl_easy_setopt/getinfo as type-checking macros on GCC; the pointers below are
// named differently so those macros never touch them.
struct CurlApi {
  CURLcode (*global_init)(long flags) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  struct curl_slist* (*slist_append)(struct curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(struct curl_slist*) = nullptr;
  char* (*easy_escape)(CURL*, const char*, int) = nullptr;
  void (*free)(void*) = nullptr;
};

Result<const CurlApi*> curl_api();

}  // namespace kern::oci::dl
