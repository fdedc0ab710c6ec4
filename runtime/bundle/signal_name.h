// `kern oci kill ID SIGNAL`: a signal as engines spell it ("KILL", "SIGKILL", "9", "SIGRTMIN+3");
// "0" sends none and only checks the container can be signalled (kill(2)'s, and runc's).
// Pure.
#pragma once

#include <string>

#include "runtime/sys/error.h"

namespace kern::bundle {

Result<int> parse_signal(const std::string& text);

}  // namespace kern::bundle
