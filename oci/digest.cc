// SHA-256 through libcrypto (loaded with dlopen); see digest.h.
#include "oci/digest.h"

#include <unistd.h>

#include <vector>

#include "oci/dl/crypto_api.h"

namespace kern::oci {

struct Sha256::State {
  const dl::CryptoApi* api = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~State() {
    if (ctx) api->md_ctx_free(ctx);
  }
};

Sha256::Sha256(std::unique_ptr<State> s) : s_(std::move(s)) {}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

Result<Sha256> Sha256::create() {
  KERN_TRY_ASSIGN(const dl::CryptoApi* api, dl::crypto_api());
  auto s = std::make_unique<State>();
  s->api = api;
  s->ctx = api->md_ctx_new();
  if (s->ctx == nullptr || api->digest_init_ex(s->ctx, api->sha256(), nullptr) != 1)
    return fail(ErrorKind::internal, ENOMEM, "EVP_DigestInit_ex sha256");
  return Sha256(std::move(s));
}

void Sha256::update(const void* data, size_t len) {
  if (len > 0) s_->api->digest_update(s_->ctx, data, len);
}

std::string Sha256::finish() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  s_->api->digest_final_ex(s_->ctx, md, &n);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

Result<std::string> sha256_of(std::string_view data) {
  KERN_TRY_ASSIGN(Sha256 h, Sha256::create());
  h.update(data.data(), data.size());
  return h.finish();
}

Result<std::string> sha256_of_fd(int fd) {
  KERN_TRY_ASSIGN(Sha256 h, Sha256::create());
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read (hashing)", ErrorKind::image);
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
  }
  return h.finish();
}

}  // namespace kern::oci
