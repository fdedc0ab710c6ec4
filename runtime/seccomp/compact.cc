// The compact seccomp program and its interpreter; see compact.h. Build time only.
#include "runtime/seccomp/compact.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kern::seccomp_compact {
namespace {

[[noreturn]] void die(const char* what, unsigned pc) {
  std::fprintf(stderr, "kern-seccomp-gen: error: %s (instruction %u)\n", what, pc);
  std::exit(1);
}

using Code = std::vector<sock_filter>;

sock_filter stmt(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return sock_filter{code, jt, jf, k}; }

void append(Code& to, const Code& from) { to.insert(to.end(), from.begin(), from.end()); }

// Offset of the low 32 bits of argument i in struct seccomp_data.
uint32_t arg_low(unsigned i) {
  uint32_t off = static_cast<uint32_t>(offsetof(struct seccomp_data, args) + 8 * i);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  off += 4;
#endif
  return off;
}

Code leaf(const Decision& d) {
  Code c;
  int loaded = -1;  // the argument A holds (unmasked), -1: none
  for (const Check& k : d.checks) {
    // A check with the fallback's action decides nothing: compile() made sure no later check
    // with another action could match what it would have caught.
    if (k.action == d.fallback) continue;
    if (static_cast<int>(k.arg) != loaded) {
      c.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(k.arg)));
      loaded = static_cast<int>(k.arg);
    }
    if (k.any_bit) {
      c.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, k.mask, 0, 1));
    } else {
      if (k.mask != 0xffffffff) {
        c.push_back(stmt(BPF_ALU | BPF_AND | BPF_K, k.mask));
        loaded = -1;
      }
      c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, k.value, 0, 1));
    }
    c.push_back(stmt(BPF_RET | BPF_K, k.action));
  }
  c.push_back(stmt(BPF_RET | BPF_K, d.fallback));
  return c;
}

struct Piece {
  uint32_t start;
  Decision d;
};

// Binary search over pieces[i..j] (their numbers are known to be in range).
Code tree(const std::vector<Piece>& pieces, size_t i, size_t j) {
  if (i == j) return leaf(pieces[i].d);
  size_t mid = (i + j + 1) / 2;
  Code left = tree(pieces, i, mid - 1);
  Code right = tree(pieces, mid, j);
  Code c;
  if (left.size() <= 255) {
    c.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, pieces[mid].start, static_cast<uint8_t>(left.size()), 0));
  } else {
    // Beyond a conditional jump's reach: through an unconditional one.
    c.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, pieces[mid].start, 0, 1));
    c.push_back(stmt(BPF_JMP | BPF_JA, static_cast<uint32_t>(left.size())));
  }
  append(c, left);
  append(c, right);
  return c;
}

}  // namespace

std::vector<sock_filter> compile(const Policy& p) {
  // A check whose action is the fallback decides nothing only when no later check could have
  // matched the same call; leaf() drops such checks, so make sure that is always so here.
  for (const auto& [nr, d] : p.calls) {
    bool seen_other = false;
    for (auto it = d.checks.rbegin(); it != d.checks.rend(); ++it) {
      if (it->action != d.fallback) seen_other = true;
      else if (seen_other) die("a check with the fallback's action precedes a deciding one", nr);
    }
  }
  // Runs of numbers with one decision, from 0 up; past the last listed number, the default.
  std::vector<Piece> pieces;
  Decision dflt{{}, p.default_action};
  auto add = [&](uint32_t start, const Decision& d) {
    if (!pieces.empty() && pieces.back().d == d) return;
    pieces.push_back({start, d});
  };
  uint64_t next = 0;
  for (const auto& [nr, d] : p.calls) {
    if (nr > next) add(static_cast<uint32_t>(next), dflt);
    add(nr, d);
    next = uint64_t{nr} + 1;
  }
  if (next <= 0xffffffffULL) add(static_cast<uint32_t>(next), dflt);

  Code c;
  c.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, p.arch, 1, 0));
  c.push_back(stmt(BPF_RET | BPF_K, p.badarch_action));
  c.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
  if (p.x32_bit != 0) {
    c.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, p.x32_bit, 0, 2));
    c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 1, 0));
    c.push_back(stmt(BPF_RET | BPF_K, p.badarch_action));
  }
  append(c, tree(pieces, 0, pieces.size() - 1));
  if (c.size() > BPF_MAXINSNS) die("the compact program is longer than the kernel allows", 0);
  return c;
}

uint32_t run(const std::vector<sock_filter>& prog, const struct seccomp_data& d) {
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  unsigned char data[sizeof d];
  std::memcpy(data, &d, sizeof d);
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const sock_filter& f = prog[pc];
    unsigned at = static_cast<unsigned>(pc);
    auto go = [&](uint32_t off) {
      pc += off;
      if (pc + 1 >= prog.size()) die("jump out of the program", at);
    };
    switch (f.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (f.k % 4 != 0 || f.k + 4 > sizeof d) die("load outside seccomp_data", at);
        std::memcpy(&a, data + f.k, 4);
        break;
      case BPF_LD | BPF_MEM:
        if (f.k >= BPF_MEMWORDS) die("bad scratch slot", at);
        a = mem[f.k];
        break;
      case BPF_LDX | BPF_MEM:
        if (f.k >= BPF_MEMWORDS) die("bad scratch slot", at);
        x = mem[f.k];
        break;
      case BPF_ST:
        if (f.k >= BPF_MEMWORDS) die("bad scratch slot", at);
        mem[f.k] = a;
        break;
      case BPF_STX:
        if (f.k >= BPF_MEMWORDS) die("bad scratch slot", at);
        mem[f.k] = x;
        break;
      case BPF_LD | BPF_IMM: a = f.k; break;
      case BPF_LDX | BPF_IMM: x = f.k; break;
      case BPF_MISC | BPF_TAX: x = a; break;
      case BPF_MISC | BPF_TXA: a = x; break;
      case BPF_ALU | BPF_AND | BPF_K: a &= f.k; break;
      case BPF_ALU | BPF_OR | BPF_K: a |= f.k; break;
      case BPF_JMP | BPF_JA: go(f.k); break;
      case BPF_JMP | BPF_JEQ | BPF_K: go(a == f.k ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JGT | BPF_K: go(a > f.k ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JGE | BPF_K: go(a >= f.k ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JSET | BPF_K: go((a & f.k) != 0 ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JEQ | BPF_X: go(a == x ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JGT | BPF_X: go(a > x ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JGE | BPF_X: go(a >= x ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JSET | BPF_X: go((a & x) != 0 ? f.jt : f.jf); break;
      case BPF_RET | BPF_K: return f.k;
      case BPF_RET | BPF_A: return a;
      default: die("an instruction the checker does not know", at);
    }
  }
  die("the program ran off its end", static_cast<unsigned>(prog.size()));
}

}  // namespace kern::seccomp_compact
