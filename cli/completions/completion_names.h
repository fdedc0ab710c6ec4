// `kern completion --list images|boxes|kernels`: the names the completion scripts offer, one a
// line. No CLI11 here (see completion_model.h).
#pragma once

#include <string>

#include "runtime/sys/error.h"

namespace kern::cli {

// The images of the local store by the name a user types, the caller's live and exited boxes,
// or its live warm kernels, sorted, one a line; a name a shell would split is left out. Another
// `what` is a usage error.
Result<std::string> completion_names(const std::string& what);

}  // namespace kern::cli
