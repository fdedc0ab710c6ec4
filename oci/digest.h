// SHA-256 digests of blobs ("sha256:<64 hex>"), through the libcrypto loader. Any process.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::oci {

// Incremental SHA-256. Not copyable; one per stream.
class Sha256 {
 public:
  static Result<Sha256> create();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  ~Sha256();

  void update(const void* data, size_t len);
  // "sha256:<hex>"; the hasher cannot be used afterwards.
  std::string finish();

 private:
  struct State;
  explicit Sha256(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// "sha256:<hex>" of a whole buffer.
Result<std::string> sha256_of(std::string_view data);
// "sha256:<hex>" of a file's content, read from `fd` at its current offset to EOF.
Result<std::string> sha256_of_fd(int fd);

// The 64 hex digits of a "sha256:..." digest (the caller has validated it).
inline std::string_view digest_hex(std::string_view digest) { return digest.substr(7); }

}  // namespace kern::oci
