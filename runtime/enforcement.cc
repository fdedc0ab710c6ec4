// Verdict names and the started-fd memory byte; see enforcement.h.
#include "runtime/enforcement.h"

namespace kern {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::not_requested: return "not_requested";
    case Verdict::undetermined: return "undetermined";
    case Verdict::enforced: return "enforced";
    case Verdict::not_enforced: return "not_enforced";
  }
  return "undetermined";
}

uint8_t started_memory_byte(const Enforcement& e) {
  switch (e.memory) {
    case Verdict::enforced: return 1;
    case Verdict::not_enforced: return 2;
    default: return 0;
  }
}

}  // namespace kern
