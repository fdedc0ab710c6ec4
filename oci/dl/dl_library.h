// Opening an optional shared library at run time. Any process, never after clone.
//
// The kern binary links none of libarchive, libcurl and libcrypto: each costs milliseconds at
// every process start (measured: libcurl ~8 ms, libarchive ~3 ms, libcrypto ~1.4 ms), and only
// the image verbs need them. The loaders in this directory open them by soname on first use and
// resolve the few functions kern calls into a struct of pointers typed from the real headers.
#pragma once

#include <string>

#include "runtime/sys/error.h"

namespace kern::oci::dl {

// dlopen(soname, RTLD_NOW | RTLD_LOCAL). A missing library is ErrorKind::host_unsupported naming
// the Debian package that provides it.
Result<void*> open_library(const char* soname, const char* debian_package);

// dlsym that reports which symbol was missing.
Result<void*> symbol(void* handle, const char* soname, const char* name);

}  // namespace kern::oci::dl

// Inside a loader's resolve function: fills `api.field` with the symbol `name`, or returns.
#define KERN_DL_SYM(handle, soname, api, field, name)                                  \
  do {                                                                                 \
    auto kern_dl_s_ = ::kern::oci::dl::symbol((handle), (soname), (name));             \
    if (!kern_dl_s_) return ::kern::fail(std::move(kern_dl_s_).error());               \
    (api).field = reinterpret_cast<decltype((api).field)>(*kern_dl_s_);                \
  } while (0)
