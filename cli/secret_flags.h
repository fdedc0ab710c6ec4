// --secret SRC[:NAME]: a host file given to the box as /run/secrets/NAME (NAME: SRC's file name
// when left out), as compose's file secrets are: 0400, the workload's own, on a tmpfs of the box,
// never in its environment, command line, record, `kern inspect` or an image. The file is read
// when the box is made (at most 512 KiB, a regular file); a detached box's restarts get the bytes
// read then.
#pragma once

#include <string>
#include <utility>

#include "runtime/sys/error.h"

namespace kern::cli {

// NAME and the file's bytes, or why not.
Result<std::pair<std::string, std::string>> read_secret(const std::string& text);

}  // namespace kern::cli
