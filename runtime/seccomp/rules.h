// The seccomp policy of a box, as data (kern-box(1)). Read only by the build-time
// generator (generate.cc), which turns it into the two BPF programs that the box loads; nothing
// here runs in kern itself.
//
// Three answers besides "allowed": killed (SIGSYS, exit 159) for the escape class, ENOSYS for
// optional features programs probe and fall back from, and a specific errno for a few argument
// values. The same killed/ENOSYS/errno rules apply in both modes; the modes differ only in what
// happens to every other call: the allowlist answers ENOSYS unless the call is listed here, the
// denylist allows it.
#pragma once

#include <cstdint>
#include <span>

namespace kern::seccomp_rules {

// What a matching call gets.
enum class Verdict { allow, kill, enosys, eperm, eafnosupport };

// Calls a box may make unconditionally in allowlist mode. Names this libseccomp does not know
// (and that are not in newer_syscalls()) are left to the default answer, ENOSYS.
std::span<const char* const> allowed();
// Killed with SIGSYS in both modes.
std::span<const char* const> killed();
// ENOSYS in both modes (in allowlist mode this is also the default answer).
std::span<const char* const> enosys();

// A rule on one argument, compared on the bits of `mask` only. The kernel reads ioctl's request,
// socket's domain and personality's persona as 32-bit values, so a caller that sets the upper
// half of the register must not slip past a 64-bit comparison: those rules mask to 32 bits.
struct ArgRule {
  const char* syscall;
  unsigned arg;            // argument index
  uint64_t mask;
  std::span<const uint64_t> values;  // matched as (arg & mask) == value
  Verdict verdict;         // for a matching value
  // true: every non-matching value is allowed (the rule carves exceptions out of an allowed
  // call); false: non-matching values get the mode's default answer.
  bool others_allowed;
};
std::span<const ArgRule> arg_rules();

// clone(2) with any namespace flag is killed; clone without one is allowed. The flags are in
// argument 0 on x86_64 and most architectures (argument 1 on s390).
uint64_t clone_namespace_flags();
unsigned clone_flags_arg();

// Syscall numbers for calls newer than the libseccomp and kernel headers this may be built with,
// in the common numbering that every architecture without an offset shares from 424 on (the
// generator refuses a target whose numbering differs). Syscall numbers are a stable ABI, so a
// call the kernel added after libseccomp still gets its rule instead of silently falling to the
// default (which, for the killed class in denylist mode, would be "allowed").
struct KnownNumber {
  const char* name;
  int nr;
};
std::span<const KnownNumber> newer_syscalls();

}  // namespace kern::seccomp_rules
