// The names the OCI runtime specification defines for Linux and that kern accepts: one list
// each, read by the config parser and by the features document, so the two cannot disagree.
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace kern::bundle {

inline constexpr std::array<std::string_view, 8> kNamespaceTypes = {"mount", "pid", "network", "uts",
                                                                    "ipc",   "user", "cgroup", "time"};
inline constexpr std::array<std::string_view, 9> kSeccompActions = {
    "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",  "SCMP_ACT_ERRNO",
    "SCMP_ACT_TRACE", "SCMP_ACT_ALLOW",        "SCMP_ACT_LOG",         "SCMP_ACT_NOTIFY"};
inline constexpr std::array<std::string_view, 7> kSeccompOps = {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",
                                                                "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT",
                                                                "SCMP_CMP_MASKED_EQ"};
inline constexpr std::array<std::string_view, 4> kSeccompFlags = {
    "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
// What compile_seccomp carries out (TSYNC needs nothing: the workload has one thread at load).
inline constexpr std::array<std::string_view, 3> kSeccompFlagsSupported = {
    "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"};
// process.rlimits[].type for Linux, indexed by the resource number of <sys/resource.h>
// (RLIMIT_CPU = 0 ... RLIMIT_RTTIME = 15); a name outside the list cannot be mapped and is refused.
inline constexpr std::array<std::string_view, 16> kRlimitTypes = {
    "RLIMIT_CPU",     "RLIMIT_FSIZE",  "RLIMIT_DATA",       "RLIMIT_STACK",    "RLIMIT_CORE",   "RLIMIT_RSS",
    "RLIMIT_NPROC",   "RLIMIT_NOFILE", "RLIMIT_MEMLOCK",    "RLIMIT_AS",       "RLIMIT_LOCKS",  "RLIMIT_SIGPENDING",
    "RLIMIT_MSGQUEUE", "RLIMIT_NICE",  "RLIMIT_RTPRIO",     "RLIMIT_RTTIME"};
// runc takes the recursive names too (podman writes rslave, Kubernetes rshared).
inline constexpr std::array<std::string_view, 8> kRootfsPropagation = {
    "private", "shared", "slave", "unbindable", "rprivate", "rshared", "rslave", "runbindable"};

// Whether `v` is one of the names of a list above.
template <size_t N>
bool one_of(std::string_view v, const std::array<std::string_view, N>& allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

}  // namespace kern::bundle
