// A compact BPF form of a seccomp policy, for kern-seccomp-gen (build time only). libseccomp's
// output spends an instruction on every syscall number and several dozen on each argument rule
// (its MASKED_EQ complements); the kernel JITs the whole program at every box's start, so its
// length is paid at every start. This compiles the same decisions into a binary search over
// runs of syscall numbers with one verdict, with argument rules as short compare chains, and
// checks it: `run` interprets a program, and generate.cc compares both programs' verdicts over
// every syscall number and a spread of arguments, failing the build on any difference.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <map>
#include <vector>

namespace kern::seccomp_compact {

// One test on the low 32 bits of an argument (the kernel reads the rules' arguments as 32-bit
// values): (arg & mask) == value, or with any_bit, (arg & mask) != 0.
struct Check {
  unsigned arg = 0;
  bool any_bit = false;
  uint32_t mask = 0xffffffff;
  uint32_t value = 0;
  uint32_t action = 0;
};

// The checks in order, the first that holds decides; none: `fallback`.
struct Decision {
  std::vector<Check> checks;
  uint32_t fallback = 0;
  bool operator==(const Decision&) const = default;
};

inline bool operator==(const Check& a, const Check& b) {
  return a.arg == b.arg && a.any_bit == b.any_bit && a.mask == b.mask && a.value == b.value && a.action == b.action;
}

struct Policy {
  uint32_t arch = 0;            // AUDIT_ARCH_* of the one architecture allowed
  uint32_t badarch_action = 0;  // any other architecture
  // x86_64: numbers with this bit (the x32 ABI) get badarch_action, except -1, as libseccomp
  // does; 0 elsewhere.
  uint32_t x32_bit = 0;
  uint32_t default_action = 0;
  std::map<uint32_t, Decision> calls;
};

std::vector<sock_filter> compile(const Policy& p);

// The program's answer for `d`. Dies (exits 1 with a message) on an instruction it does not
// know or a jump out of the program: a program it cannot check is not accepted.
uint32_t run(const std::vector<sock_filter>& prog, const struct seccomp_data& d);

}  // namespace kern::seccomp_compact
