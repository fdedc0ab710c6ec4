// The libcrypto loader; see crypto_api.h.
#include "oci/dl/crypto_api.h"

#include "oci/dl/dl_library.h"

namespace kern::oci::dl {
namespace {

constexpr const char* kSoname = "libcrypto.so.3";

Result<CryptoApi> resolve() {
  KERN_TRY_ASSIGN(void* h, open_library(kSoname, "libssl3"));
  CryptoApi api;
#define KERN_CRYPTO_RESOLVE(field, sym) KERN_DL_SYM(h, kSoname, api, field, #sym);
  KERN_CRYPTO_FUNCTIONS(KERN_CRYPTO_RESOLVE)
#undef KERN_CRYPTO_RESOLVE
  return api;
}

}  // namespace

Result<const CryptoApi*> crypto_api() {
  static const Result<CryptoApi> loaded = resolve();
  if (!loaded) return fail(Error(loaded.error()));
  return &*loaded;
}

}  // namespace kern::oci::dl
