// The pure part of `kern cp`'s command line (cli/cp_command.cc), for unit tests: which of SRC and
// DST is the box's NAME:PATH, which the host's path or "-".
#pragma once

#include <string>

#include "runtime/sys/error.h"

namespace kern::cli {

struct CopyEnd {
  enum class Kind { host, box, stream } kind = Kind::host;
  std::string name;  // box: the box's name
  std::string path;  // box: the path after the ":"; host: the path as given
};

// As docker cp reads it: "-" is a tar stream (stdin or stdout); a word with a ":" that no "/"
// precedes is NAME:PATH; anything else is a host path (spell a host file named "a:b" "./a:b").
CopyEnd copy_end(const std::string& word);

struct CopyArgs {
  CopyEnd src, dst;
};

// Exactly one of the two is a box's; the other a host path or "-". Usage errors otherwise (an
// invalid box name too).
Result<CopyArgs> copy_args(const std::string& src, const std::string& dst);

}  // namespace kern::cli
