// The registry TLS flags; see tls_flags.h.
#include "cli/tls_flags.h"

namespace kern::cli {

void add_tls_flags(CLI::App* verb, TlsFlags& flags) {
  verb->add_flag("--tls-verify{true}", flags.verify,
                 "verify the registry's TLS certificate (default true; =false also allows plain HTTP to it)");
  verb->add_option("--cert-dir", flags.cert_dir, "directory of CA certificates (*.crt) and a client certificate (*.cert, *.key)");
}

Result<oci::TlsRequest> tls_request(const TlsFlags& flags) {
  oci::TlsRequest r;
  if (flags.verify == "true" || flags.verify == "1") r.verify = true;
  else if (flags.verify == "false" || flags.verify == "0") r.verify = false;
  else if (!flags.verify.empty())
    return fail(ErrorKind::usage, 0, "--tls-verify takes true or false, not \"" + flags.verify + "\"");
  r.cert_dir = flags.cert_dir;
  return r;
}

}  // namespace kern::cli
