// See box_platform.h.
#include "oci/box_platform.h"

#include "runtime/sys/log.h"

namespace kern::oci {
namespace {

// The 32-bit ABI a 64-bit kernel of `host` runs beside its own (OCI architecture names).
const char* compat_of(const std::string& host) {
  if (host == "arm64") return "arm";
  if (host == "amd64") return "386";
  return nullptr;
}

}  // namespace

Status check_box_architecture(const std::string& ref, const std::string& image_arch, const std::string& host_arch) {
  const char* compat = compat_of(host_arch);
  if (compat == nullptr || image_arch != compat) return {};
  return fail(Error(ErrorKind::image, 0,
                    "image " + log::sanitize(ref) + " is for linux/" + image_arch + ", a 32-bit ABI of this " +
                        host_arch + " host: a box's seccomp filter allows " + host_arch +
                        " calls only and would kill its first call")
                  .with_hint("use the image's linux/" + host_arch + " variant"));
}

std::string exec_format_hint(const std::string& image_arch, const std::string& host_arch) {
  if (image_arch.empty() || image_arch == host_arch) return "";
  return "the image is for linux/" + image_arch + " and this host is linux/" + host_arch +
         ": its programs cannot run here (unless binfmt_misc is set up to emulate them)";
}

}  // namespace kern::oci
