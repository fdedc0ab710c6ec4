// What `kern version` and `kern --version` report about this build. kGitCommit and kBuildType
// are generated at build time (cli/version_info.cmake); the rest is assembled in version_command.cc.
#pragma once

#include <string>

namespace kern::cli {

extern const char* const kGitCommit;  // "abc123def456", "...-dirty", or "unknown"
extern const char* const kBuildType;  // CMAKE_BUILD_TYPE

// The text of `kern version`: several "key: value" lines after "kern VERSION".
std::string version_text();
// The same as one JSON object (`kern version --json`).
std::string version_json();

}  // namespace kern::cli
