// The registry TLS flags that `kern pull` and `kern login` share: --tls-verify[=true|false] and
// --cert-dir DIR (oci/registry_tls.h says what they mean).
#pragma once

#include "cli/cli11.h"

#include <string>

#include "oci/registry_tls.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct TlsFlags {
  std::string verify;  // "", "true" or "false" as typed
  std::string cert_dir;
};

void add_tls_flags(CLI::App* verb, TlsFlags& flags);
Result<oci::TlsRequest> tls_request(const TlsFlags& flags);

}  // namespace kern::cli
