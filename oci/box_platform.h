// Whether an image's programs can run in a box on this host, from the architecture its config
// names: the refusal before a box starts, and the words for an exec the kernel refused.
#pragma once

#include <string>

#include "runtime/sys/error.h"

namespace kern::oci {

// Refuses (ErrorKind::image) an image built for the host's 32-bit ABI: arm on arm64, 386 on
// amd64. The kernel may well run such programs, but a box's seccomp filter holds the native ABI
// only and kills the first call of any other (kern-box(1)). Any other architecture is let
// through, an empty one (unknown) too: binfmt_misc with qemu-user can run a foreign image.
Status check_box_architecture(const std::string& ref, const std::string& image_arch, const std::string& host_arch);

// For an execve in a box that failed with ENOEXEC: names both architectures when the image's is
// known and differs from the host's, "" otherwise.
std::string exec_format_hint(const std::string& image_arch, const std::string& host_arch);

}  // namespace kern::oci
