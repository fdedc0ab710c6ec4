// dlopen/dlsym with kern::Error reporting; see dl_library.h.
#include "oci/dl/dl_library.h"

#include <dlfcn.h>

namespace kern::oci::dl {

Result<void*> open_library(const char* soname, const char* debian_package) {
  void* h = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = ::dlerror();
    return fail(Error(ErrorKind::host_unsupported, 0,
                      std::string("cannot load ") + soname + ": " + (why ? why : "not found"))
                    .with_hint(std::string("install the Debian package ") + debian_package +
                               " (apt-get install " + debian_package + ")"));
  }
  return h;
}

Result<void*> symbol(void* handle, const char* soname, const char* name) {
  ::dlerror();
  void* p = ::dlsym(handle, name);
  if (p == nullptr)
    return fail(ErrorKind::host_unsupported, 0,
                std::string(soname) + " has no symbol " + name + ": the library is too old");
  return p;
}

}  // namespace kern::oci::dl
