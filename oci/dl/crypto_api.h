// libcrypto (OpenSSL 3), opened with dlopen on first use ("libcrypto.so.3", Debian package
// libssl3), for SHA-256 only.
#pragma once

#include <openssl/evp.h>

#include "runtime/sys/error.h"

namespace kern::oci::dl {

#define KERN_CRYPTO_FUNCTIONS(X)          \
  X(md_ctx_new, EVP_MD_CTX_new)           \
  X(md_ctx_free, EVP_MD_CTX_free)         \
  X(sha256, EVP_sha256)                   \
  X(digest_init_ex, EVP_DigestInit_ex)    \
  X(digest_update, EVP_DigestUpdate)      \
  X(digest_final_ex, EVP_DigestFinal_ex)

struct CryptoApi {
#define KERN_CRYPTO_FIELD(field, sym) decltype(&::sym) field = nullptr;
  KERN_CRYPTO_FUNCTIONS(KERN_CRYPTO_FIELD)
#undef KERN_CRYPTO_FIELD
};

Result<const CryptoApi*> crypto_api();

}  // namespace kern::oci::dl
