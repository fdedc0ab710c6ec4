// The one table that maps an Error to an exit code (kern-box(1)). Nothing else in kern
// decides an exit code for a failure.
#pragma once

#include "runtime/sys/error.h"

namespace kern::cli {

enum class ExitTable {
  box,   // kern box (and kernel start): 125 kern failed, 126 cannot execute, 127 not found
  verb,  // every other verb: 1 failure, 2 usage
};

inline constexpr int kExitBoxFailed = 125;
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;
inline constexpr int kExitVerbFailed = 1;
inline constexpr int kExitUsage = 2;

int exit_code_for(const Error& e, ExitTable table);

}  // namespace kern::cli
