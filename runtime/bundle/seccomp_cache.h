// Compiled linux.seccomp programs kept for the next container that asks for the same one.
//
// An engine gives every container the same profile (podman's and Docker's default is some 400
// system calls), and libseccomp takes milliseconds to compile it: 16 ms of a 31 ms `kern oci
// create` under podman here. So the program is compiled once and kept in a directory of the
// runtime's state root (mode 0700, owned by the runtime's user, like the containers' state), and
// a later create, exec or startContainer hook with the same profile loads it instead.
//
// An entry is used only when it was made from exactly the same input: it holds the whole
// canonical form of the profile beside the program and is compared byte for byte (its file name
// is only a hash of it, to find it), and that form includes the identity (device, inode, size,
// modification time) of this kern binary and of the libseccomp it compiles with, so a new kern
// or a new libseccomp compiles again. An entry that is not a regular file of this user, is
// writable by others, or does not parse is ignored and replaced. The cache never decides
// whether a container starts: any failure to read or write it means compiling as before.
// Any process, before clone.
#pragma once

#include <string>

#include "runtime/bundle/seccomp_compile.h"

namespace kern::bundle {

// compile_seccomp(s), through the cache in `cache_dir` (made 0700 when missing; empty: no
// cache). `hit`, when given, says whether the program came from the cache.
Result<CompiledSeccomp> compile_seccomp_cached(const Seccomp& s, const std::string& cache_dir, bool* hit = nullptr);

// The canonical form of a profile that an entry is keyed by, without the identities. Pure.
std::string seccomp_profile_text(const Seccomp& s);

// The cache directory of a state root.
std::string seccomp_cache_dir(const std::string& state_root);

}  // namespace kern::bundle
