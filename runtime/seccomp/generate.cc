// kern-seccomp-gen: a build-time host tool. It compiles the policy in rules.cc into the three BPF
// programs a box loads (allowlist, denylist and allowlist_audit) with libseccomp, and writes them as C++ arrays
// for kern_seccomp_programs. kern itself never links libseccomp and never compiles a filter per
// box: the child only hands the finished program to seccomp(2).
//
// Usage: kern-seccomp-gen OUT.cc LISTING_DIR
//   OUT.cc       the generated source (written atomically)
//   LISTING_DIR  receives allowlist.pfc, denylist.pfc and allowlist_audit.pfc, libseccomp's
//                readable listings
//
// The arrays written are not libseccomp's programs but the same decisions in a compact form
// (compact.h: a binary search over runs of numbers, a few instructions per argument rule), which
// the kernel JITs at every box's start. Before writing, both are run through an interpreter on
// every syscall number and a spread of arguments and architectures; any difference in verdict
// fails the build.
//
// Any libseccomp error, any policy inconsistency, and any killed/ENOSYS name that cannot be
// resolved to a syscall number fail the build with a message: a silently missing rule in denylist
// mode would mean "allowed".
#include <fcntl.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/seccomp/compact.h"
#include "runtime/seccomp/rules.h"

namespace {

using kern::seccomp_rules::Verdict;

[[noreturn]] void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("kern-seccomp-gen: error: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::exit(1);
}

// libseccomp returns -errno.
void check(int rc, const std::string& what) {
  if (rc < 0) die("%s: %s", what.c_str(), std::strerror(-rc));
}

// allowlist_audit is the allowlist whose default (a call not on any list) goes to a user-space
// listener instead of ENOSYS: KERN_SECCOMP=allowlist-audit, where kern records the call and lets
// it run. Every named rule (killed, ENOSYS, errno) stays as in the allowlist.
enum class Mode { allowlist, denylist, allowlist_audit };
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::allowlist: return "allowlist";
    case Mode::denylist: return "denylist";
    case Mode::allowlist_audit: return "allowlist_audit";
  }
  return "?";
}

uint32_t action_of(Verdict v) {
  switch (v) {
    case Verdict::allow: return SCMP_ACT_ALLOW;
    case Verdict::kill: return SCMP_ACT_KILL_PROCESS;
    case Verdict::enosys: return SCMP_ACT_ERRNO(ENOSYS);
    case Verdict::eperm: return SCMP_ACT_ERRNO(EPERM);
    case Verdict::eafnosupport: return SCMP_ACT_ERRNO(EAFNOSUPPORT);
  }
  die("unknown verdict");
}

// The table of newer calls is in the common numbering (rules.h); an architecture whose numbers
// carry an offset would get wrong rules from it, silently. Checked on a call from the start of
// that numbering which every libseccomp the build accepts knows.
void require_common_numbering(const char* wanted) {
  int nr = seccomp_syscall_resolve_name("pidfd_send_signal");
  if (nr != 424)
    die("syscall \"%s\" is unknown to libseccomp %u.%u.%u, and rules.cc's table of newer calls does not "
        "apply to this architecture (0x%08x): pidfd_send_signal is %d here, not 424",
        wanted, seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro,
        seccomp_arch_native(), nr);
}

// The native syscall number for `name`, or -1 when neither libseccomp nor the table of newer
// calls knows it on this architecture.
int resolve(const char* name) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) {
    for (const auto& k : kern::seccomp_rules::newer_syscalls()) {
      if (std::strcmp(k.name, name) != 0) continue;
      require_common_numbering(name);
      return k.nr;
    }
  }
  // Negative values other than the error are libseccomp's pseudo numbers for calls that do not
  // exist on this architecture.
  return nr < 0 ? -1 : nr;
}

int resolve_required(const char* name) {
  int nr = resolve(name);
  if (nr < 0)
    die("syscall \"%s\" is unknown to libseccomp %u.%u.%u and to rules.cc's table of newer calls; "
        "add its number to newer_syscalls()",
        name, seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro);
  return nr;
}

// Pairwise disjoint (mask, value) cubes whose union is every x with (x & field) not among
// `values`. One MASKED_EQ rule per cube lets "allowed unless the argument is one of these" be
// said in libseccomp, which otherwise has no "else" per syscall and lets an unconditional rule
// swallow the conditional ones.
void complement_cover(uint64_t field, std::vector<uint64_t> values,
                      std::vector<std::pair<uint64_t, uint64_t>>& out) {
  std::vector<uint64_t> bits;
  for (int b = 63; b >= 0; --b)
    if ((field >> b) & 1) bits.push_back(uint64_t{1} << b);
  for (auto& v : values) v &= field;
  auto recurse = [&](auto& self, size_t i, uint64_t m, uint64_t val,
                     const std::vector<uint64_t>& vals) -> void {
    if (vals.empty()) {
      out.emplace_back(m, val);
      return;
    }
    if (i == bits.size()) return;  // exactly one of `values`: not in the cover
    for (uint64_t side : {uint64_t{0}, bits[i]}) {
      std::vector<uint64_t> sub;
      for (uint64_t v : vals)
        if ((v & bits[i]) == side) sub.push_back(v);
      self(self, i + 1, m | bits[i], val | side, sub);
    }
  };
  recurse(recurse, 0, 0, 0, values);
}

class FilterBuilder {
 public:
  explicit FilterBuilder(Mode mode)
      : mode_(mode),
        default_(mode == Mode::allowlist         ? SCMP_ACT_ERRNO(ENOSYS)
                 : mode == Mode::allowlist_audit ? SCMP_ACT_NOTIFY
                                                 : SCMP_ACT_ALLOW),
        ctx_(seccomp_init(default_)) {
    if (ctx_ == nullptr) die("seccomp_init(%s) failed", mode_name(mode));
    // Only the native architecture is in the filter, so a call made through any other ABI hits
    // the bad-architecture action: every i386 call (int 0x80, sysenter) dies, and on aarch64
    // every call of an AArch32 task (AUDIT_ARCH_ARM: a 32-bit ARM binary run by a kernel with
    // COMPAT), at its first syscall. On x86_64, libseccomp also sends native-arch numbers with
    // the x32 bit (0x40000000) to this action when x32 is not in the filter, so every x32 call
    // dies too.
    set_attr(SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS, "ACT_BADARCH");
    // The program is exported, never loaded here; the box's child sets no_new_privs itself
    // before loading it, so libseccomp's own load-time switch stays off.
    set_attr(SCMP_FLTATR_CTL_NNP, 0, "CTL_NNP");
    // A binary tree over syscall numbers: the allowlist has ~300 entries and a linear chain
    // would make every allowed call walk a large part of it.
    set_attr(SCMP_FLTATR_CTL_OPTIMIZE, 2, "CTL_OPTIMIZE");
    set_attr(SCMP_FLTATR_API_SYSRAWRC, 1, "API_SYSRAWRC");
  }
  ~FilterBuilder() { seccomp_release(ctx_); }
  FilterBuilder(const FilterBuilder&) = delete;
  FilterBuilder& operator=(const FilterBuilder&) = delete;

  scmp_filter_ctx ctx() const { return ctx_; }
  Mode mode() const { return mode_; }
  uint32_t default_action() const { return default_; }

  // Adds `action` for syscall `nr` when all of `conds` hold. A rule whose action is the default
  // is redundant (and refused by libseccomp), so it is left out.
  void add(const char* name, int nr, uint32_t action, const std::vector<scmp_arg_cmp>& conds = {}) {
    if (action == default_) return;
    int rc = seccomp_rule_add_exact_array(ctx_, action, nr, static_cast<unsigned>(conds.size()),
                                          conds.empty() ? nullptr : conds.data());
    check(rc, std::string("seccomp_rule_add(") + mode_name(mode_) + ", " + name + ")");
    ++rules_;
  }

  unsigned rules() const { return rules_; }

 private:
  void set_attr(scmp_filter_attr attr, uint32_t value, const char* what) {
    check(seccomp_attr_set(ctx_, attr, value), std::string("seccomp_attr_set(") + what + ")");
  }

  Mode mode_;
  uint32_t default_;
  scmp_filter_ctx ctx_;
  unsigned rules_ = 0;
};

scmp_arg_cmp masked_eq(unsigned arg, uint64_t mask, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value};
}

// Names must appear once across all lists, or one rule would silently override another.
void check_policy_consistent() {
  std::set<std::string> seen;
  auto note = [&](const char* name) {
    if (!seen.insert(name).second) die("syscall \"%s\" is listed twice in rules.cc", name);
  };
  for (const char* n : kern::seccomp_rules::allowed()) note(n);
  for (const char* n : kern::seccomp_rules::killed()) note(n);
  for (const char* n : kern::seccomp_rules::enosys()) note(n);
  for (const auto& r : kern::seccomp_rules::arg_rules()) note(r.syscall);
  note("clone");
}

// The policy twice: as libseccomp rules in `f` and as the compact form's decisions in `c`
// (compact.h), from the same resolved numbers; main() checks that both programs agree.
void build(FilterBuilder& f, std::vector<std::string>& skipped, kern::seccomp_compact::Policy& c) {
  namespace r = kern::seccomp_rules;
  namespace sc = kern::seccomp_compact;
  auto plain = [&](int nr, uint32_t action) { c.calls[static_cast<uint32_t>(nr)] = sc::Decision{{}, action}; };
  if (f.mode() != Mode::denylist) {
    for (const char* name : r::allowed()) {
      int nr = resolve(name);
      if (nr < 0) {
        skipped.emplace_back(name);
        continue;
      }
      f.add(name, nr, SCMP_ACT_ALLOW);
      plain(nr, SCMP_ACT_ALLOW);
    }
  }
  for (const char* name : r::killed()) {
    f.add(name, resolve_required(name), SCMP_ACT_KILL_PROCESS);
    plain(resolve_required(name), SCMP_ACT_KILL_PROCESS);
  }
  for (const char* name : r::enosys()) {
    f.add(name, resolve_required(name), SCMP_ACT_ERRNO(ENOSYS));
    plain(resolve_required(name), SCMP_ACT_ERRNO(ENOSYS));
  }

  for (const auto& rule : r::arg_rules()) {
    int nr = resolve_required(rule.syscall);
    if (rule.mask > 0xffffffffULL) die("rule on %s: the compact form compares 32-bit arguments only", rule.syscall);
    sc::Decision d{{}, rule.others_allowed ? SCMP_ACT_ALLOW : f.default_action()};
    for (uint64_t v : rule.values) {
      f.add(rule.syscall, nr, action_of(rule.verdict), {masked_eq(rule.arg, rule.mask, v)});
      d.checks.push_back({rule.arg, false, static_cast<uint32_t>(rule.mask), static_cast<uint32_t>(v & rule.mask),
                          action_of(rule.verdict)});
    }
    if (rule.others_allowed) {
      std::vector<std::pair<uint64_t, uint64_t>> cubes;
      complement_cover(rule.mask, {rule.values.begin(), rule.values.end()}, cubes);
      for (const auto& [m, v] : cubes) f.add(rule.syscall, nr, SCMP_ACT_ALLOW, {masked_eq(rule.arg, m, v)});
    }
    c.calls[static_cast<uint32_t>(nr)] = d;
  }

  // clone: killed when any namespace bit is set, allowed when none is.
  int clone_nr = resolve_required("clone");
  uint64_t ns = r::clone_namespace_flags();
  unsigned arg = r::clone_flags_arg();
  for (int b = 0; b < 64; ++b) {
    uint64_t bit = uint64_t{1} << b;
    if (ns & bit) f.add("clone", clone_nr, SCMP_ACT_KILL_PROCESS, {masked_eq(arg, bit, bit)});
  }
  f.add("clone", clone_nr, SCMP_ACT_ALLOW, {masked_eq(arg, ns, 0)});
  if (ns > 0xffffffffULL) die("clone's namespace flags: the compact form compares 32-bit arguments only");
  c.calls[static_cast<uint32_t>(clone_nr)] =
      sc::Decision{{{arg, true, static_cast<uint32_t>(ns), 0, SCMP_ACT_KILL_PROCESS}}, SCMP_ACT_ALLOW};
}

// Both programs' answers for every syscall number up to well past the last one, the numbers
// around the x32 bit and the top, five architectures, and for the calls with argument rules a
// spread of values (each rule's own, its neighbours, each single bit, the upper half set,
// pseudo-random ones) in every argument. Any difference fails the build.
void check_same_verdicts(const std::vector<sock_filter>& lib, const std::vector<sock_filter>& compact,
                         const kern::seccomp_compact::Policy& c, Mode mode) {
  namespace sc = kern::seccomp_compact;
  std::vector<uint64_t> values = {0, 1, 0xffffffffULL, 0x100000000ULL, 0xffffffff00000000ULL, ~0ULL};
  for (int b = 0; b < 64; ++b) values.push_back(uint64_t{1} << b);
  for (const auto& [nr, d] : c.calls)
    for (const auto& k : d.checks)
      for (uint64_t v : std::initializer_list<uint64_t>{k.value, k.value | 0x100000000ULL, k.value ^ 1U, k.value + 1ULL,
                                                       k.value - 1ULL, k.mask, ~uint64_t{k.mask}})
        values.push_back(v);
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 256; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    values.push_back(seed);
    values.push_back(seed & 0xffffffffULL);
  }
  std::vector<uint32_t> nrs;
  for (uint32_t n = 0; n < 1200; ++n) nrs.push_back(n);
  for (uint32_t n : {0x3fffffffU, 0x40000000U, 0x40000001U, 0x4000003bU, 0x40000200U, 0x7fffffffU, 0x80000000U,
                     0xfffffffeU, 0xffffffffU})
    nrs.push_back(n);
  unsigned long checked = 0;
  auto one = [&](const struct seccomp_data& d) {
    uint32_t a = sc::run(lib, d), b = sc::run(compact, d);
    ++checked;
    if (a != b)
      die("%s: the compact program answers 0x%08x where libseccomp's answers 0x%08x (nr %d arch 0x%08x args "
          "%#llx %#llx %#llx)",
          mode_name(mode), b, a, d.nr, d.arch, static_cast<unsigned long long>(d.args[0]),
          static_cast<unsigned long long>(d.args[1]), static_cast<unsigned long long>(d.args[2]));
  };
  for (uint32_t arch : {c.arch, 0x40000003U /* i386 */, 0x40000028U /* arm */, 0U, 0xffffffffU}) {
    for (uint32_t nr : nrs) {
      struct seccomp_data d;
      std::memset(&d, 0, sizeof d);
      d.nr = static_cast<int>(nr);
      d.arch = arch;
      one(d);
      for (auto& a : d.args) a = ~0ULL;
      one(d);
      auto it = c.calls.find(nr);
      if (it == c.calls.end() || it->second.checks.empty() || arch != c.arch) continue;
      for (uint64_t v : values) {
        for (unsigned i = 0; i < 6; ++i) {
          std::memset(d.args, 0, sizeof d.args);
          d.args[i] = v;
          one(d);
        }
        for (auto& a : d.args) a = v;
        one(d);
      }
    }
  }
  std::fprintf(stderr, "kern-seccomp-gen: %s: %zu instructions (libseccomp's %zu), the same verdict in %lu cases\n",
               mode_name(mode), compact.size(), lib.size(), checked);
}

std::vector<sock_filter> export_bpf(const FilterBuilder& f) {
  int fd = memfd_create("kern-seccomp-gen", MFD_CLOEXEC);
  if (fd < 0) die("memfd_create: %s", std::strerror(errno));
  check(seccomp_export_bpf(f.ctx(), fd), std::string("seccomp_export_bpf(") + mode_name(f.mode()) + ")");
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0)
    die("exported %s program has size %lld, not a whole number of instructions", mode_name(f.mode()),
        static_cast<long long>(size));
  std::vector<sock_filter> prog(static_cast<size_t>(size) / sizeof(sock_filter));
  if (pread(fd, prog.data(), static_cast<size_t>(size), 0) != size)
    die("reading back the %s program: %s", mode_name(f.mode()), std::strerror(errno));
  close(fd);
  if (prog.size() > BPF_MAXINSNS)
    die("%s program has %zu instructions, more than the kernel's %d", mode_name(f.mode()), prog.size(),
        BPF_MAXINSNS);
  return prog;
}

void export_listing(const FilterBuilder& f, const std::string& dir) {
  std::string path = dir + "/" + mode_name(f.mode()) + ".pfc";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("open \"%s\": %s", path.c_str(), std::strerror(errno));
  check(seccomp_export_pfc(f.ctx(), fd), "seccomp_export_pfc(" + path + ")");
  if (close(fd) != 0) die("close \"%s\": %s", path.c_str(), std::strerror(errno));
}

void write_array(std::string& out, const char* name, const std::vector<sock_filter>& prog) {
  char line[96];
  out += "const struct sock_filter ";
  out += name;
  out += "[] = {\n";
  for (const sock_filter& ins : prog) {
    std::snprintf(line, sizeof line, "    {0x%04x, %u, %u, 0x%08x},\n", ins.code, ins.jt, ins.jf, ins.k);
    out += line;
  }
  out += "};\n";
  std::snprintf(line, sizeof line, "const unsigned short %s_len = %zu;\n\n", name, prog.size());
  out += line;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) die("open \"%s\": %s", tmp.c_str(), std::strerror(errno));
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
    die("write \"%s\": %s", tmp.c_str(), std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    die("rename \"%s\": %s", path.c_str(), std::strerror(errno));
}

// The native syscall names by number, for the audit mode's records (kern itself has no
// libseccomp to ask).
void write_names(std::string& out) {
  constexpr int kMax = 1024;
  out += "const char* const syscall_names[] = {\n";
  for (int nr = 0; nr < kMax; ++nr) {
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    std::string n = name != nullptr ? name : "";
    std::free(name);
    if (n.empty()) {
      for (const auto& k : kern::seccomp_rules::newer_syscalls())
        if (k.nr == nr) n = k.name;
    }
    out += n.empty() ? "    nullptr,\n" : "    \"" + n + "\",\n";
  }
  out += "};\nconst unsigned syscall_names_len = " + std::to_string(kMax) + ";\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT.cc LISTING_DIR\n", argv[0]);
    return 2;
  }
  check_policy_consistent();
  // The programs are exported, never loaded here, so what the kernel running this build supports
  // must not shape them: under an emulator (a cross build) or on an old build machine, libseccomp
  // would otherwise probe that kernel and refuse KILL_PROCESS or NOTIFY. Level 5 is the API with
  // both (Linux 5.0); the box's kernel is checked when the box loads the program.
  check(seccomp_api_set(5), "seccomp_api_set(5)");

  const scmp_version* v = seccomp_version();
  char header[512];
  std::snprintf(header, sizeof header,
                "// Generated by kern-seccomp-gen (runtime/seccomp/generate.cc) from the policy in\n"
                "// runtime/seccomp/rules.cc with libseccomp %u.%u.%u. Do not edit. The arrays are the\n"
                "// compact form (runtime/seccomp/compact.h), checked to answer as libseccomp's programs\n"
                "// do; readable listings of those: allowlist.pfc, denylist.pfc, allowlist_audit.pfc.\n",
                v->major, v->minor, v->micro);
  std::string out = header;

  std::string body;
  std::vector<std::string> skipped;
  for (Mode mode : {Mode::allowlist, Mode::denylist, Mode::allowlist_audit}) {
    FilterBuilder f(mode);
    std::vector<std::string> mode_skipped;
    kern::seccomp_compact::Policy policy;
    policy.arch = seccomp_arch_native();
    policy.badarch_action = SCMP_ACT_KILL_PROCESS;
    policy.x32_bit = policy.arch == SCMP_ARCH_X86_64 ? 0x40000000U : 0;
    policy.default_action = f.default_action();
    build(f, mode_skipped, policy);
    if (mode == Mode::allowlist) skipped = mode_skipped;
    export_listing(f, argv[2]);
    // libseccomp's program is the reference (and its listing the readable form); the box loads
    // the compact one, which answers the same for every call checked, when it is the shorter.
    std::vector<sock_filter> lib = export_bpf(f);
    std::vector<sock_filter> compact = kern::seccomp_compact::compile(policy);
    check_same_verdicts(lib, compact, policy, mode);
    write_array(body, mode_name(mode), compact.size() < lib.size() ? compact : lib);
  }
  if (!skipped.empty()) {
    out += "// Allowlist names with no number here (not on this architecture, or unknown to this libseccomp), left to the default (ENOSYS):";
    std::string note = "kern-seccomp-gen: note: allowlist names with no number on this architecture or in this libseccomp, left to ENOSYS:";
    for (const auto& s : skipped) {
      out += " " + s;
      note += " " + s;
    }
    out += "\n";
    std::fprintf(stderr, "%s\n", note.c_str());
  }
  out += "#include \"runtime/seccomp/programs.h\"\n\nnamespace kern::seccomp_programs {\n\n";
  // A program for another architecture would kill every box at its first call (bad arch): the
  // compiler of the target checks this file's architecture against its own.
  char arch[224];
  std::snprintf(arch, sizeof arch,
                "static_assert(kTargetAuditArch == 0x%08xU,\n"
                "              \"the seccomp programs were generated for another architecture than the target's\");\n\n",
                seccomp_arch_native());
  out += arch;
  out += body;
  char version[96];
  std::snprintf(version, sizeof version, "const char libseccomp_version[] = \"%u.%u.%u\";\n\n", v->major,
                v->minor, v->micro);
  out += version;
  write_names(out);
  out += "}  // namespace kern::seccomp_programs\n";
  write_file_atomically(argv[1], out);
  return 0;
}
