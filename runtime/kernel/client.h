// The client side of a started kernel's unix socket: used by `kern kernel run/fire/poll/int/
// stop/ls/status`, and by `start` to tell a live kernel from a stale socket. Any kern process.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::kernel {

// Connects to kernel NAME. A missing socket is "no kernel named NAME"; a socket nobody answers
// (its supervisor was killed) is removed and reported as "not running".
Result<UniqueFd> connect_kernel(const std::string& name);

// Sends one request line and reads its one answer line.
Result<nlohmann::json> kernel_request(int fd, const nlohmann::json& request);

// Names of the kernels with a socket under the runtime dir (live or not).
std::vector<std::string> kernel_names();

}  // namespace kern::kernel
