// Capabilities of the box's workload. Everything above read_last_cap is pure and runs in the
// parent; read_last_cap runs in the parent before clone; apply_credentials_raw runs in the
// box's workload process (after clone: no allocation, raw syscalls only).
#include "runtime/caps.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace kern {
namespace {

// Indexed by capability number; the static_asserts pin the numbering to the kernel's.
constexpr std::string_view kNames[kCapNamedLast + 1] = {
    "CAP_CHOWN",           "CAP_DAC_OVERRIDE",   "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
    "CAP_FSETID",          "CAP_KILL",           "CAP_SETGID",          "CAP_SETUID",
    "CAP_SETPCAP",         "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",       "CAP_NET_RAW",        "CAP_IPC_LOCK",        "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",      "CAP_SYS_RAWIO",      "CAP_SYS_CHROOT",      "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",       "CAP_SYS_ADMIN",      "CAP_SYS_BOOT",        "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",    "CAP_SYS_TIME",       "CAP_SYS_TTY_CONFIG",  "CAP_MKNOD",
    "CAP_LEASE",           "CAP_AUDIT_WRITE",    "CAP_AUDIT_CONTROL",   "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",    "CAP_MAC_ADMIN",      "CAP_SYSLOG",          "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",   "CAP_AUDIT_READ",     "CAP_PERFMON",         "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
};
static_assert(CAP_CHOWN == 0 && CAP_SETPCAP == 8 && CAP_NET_ADMIN == 12 && CAP_SYS_ADMIN == 21);
static_assert(CAP_MKNOD == 27 && CAP_SETFCAP == 31 && CAP_SYSLOG == 34 && CAP_AUDIT_READ == 37);
static_assert(CAP_PERFMON == 38 && CAP_BPF == 39 && CAP_CHECKPOINT_RESTORE == kCapNamedLast);

constexpr uint64_t bit(int cap) { return uint64_t{1} << cap; }

constexpr uint64_t kDefault = bit(CAP_CHOWN) | bit(CAP_DAC_OVERRIDE) | bit(CAP_FSETID) |
                              bit(CAP_FOWNER) | bit(CAP_MKNOD) | bit(CAP_NET_RAW) |
                              bit(CAP_SETGID) | bit(CAP_SETUID) | bit(CAP_SETFCAP) |
                              bit(CAP_SETPCAP) | bit(CAP_NET_BIND_SERVICE) | bit(CAP_SYS_CHROOT) |
                              bit(CAP_KILL) | bit(CAP_AUDIT_WRITE);

// Why each is never kept, even on request:
//  - SYS_ADMIN: the catch-all (mounts, namespace administration, dozens of ns_capable checks);
//    it is what a box would need to undo its own confinement, and the widest kernel surface a
//    user namespace can reach.
//  - SYS_PTRACE: reading and steering other processes of the box, kern's box init included
//    (ptrace and process_vm_* are also killed by seccomp).
//  - NET_ADMIN: in the box's own network namespace it opens netfilter/nf_tables, traffic control
//    and the like to the workload: the usual route of user-namespace privilege escalations. A
//    box with --net none has only loopback to administer; with --net host the namespace belongs
//    to the host's user namespace, where it grants nothing anyway.
//  - SYS_MODULE, SYS_RAWIO, SYS_BOOT, SYS_TIME, SYSLOG, MAC_ADMIN, MAC_OVERRIDE, BPF, PERFMON:
//    the kernel checks these against the initial user namespace, so they grant nothing in a
//    box; dropping them says so, and keeps a future kernel from making them mean something
//    there.
constexpr uint64_t kAlwaysDropped = bit(CAP_SYS_ADMIN) | bit(CAP_SYS_MODULE) | bit(CAP_SYS_RAWIO) |
                                    bit(CAP_SYS_PTRACE) | bit(CAP_SYS_BOOT) | bit(CAP_SYS_TIME) |
                                    bit(CAP_MAC_ADMIN) | bit(CAP_MAC_OVERRIDE) | bit(CAP_BPF) |
                                    bit(CAP_PERFMON) | bit(CAP_SYSLOG) | bit(CAP_NET_ADMIN);

constexpr uint64_t kAll = (bit(kCapNamedLast) << 1) - 1;

char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_upper(a[i]) != ascii_upper(b[i])) return false;
  return true;
}

bool is_all(std::string_view word) { return iequals(word, "ALL"); }

bool contains_all(const std::vector<std::string>& words) {
  for (const auto& w : words)
    if (is_all(w)) return true;
  return false;
}

// The union of the sets the words stand for, ALL excluded (the caller handles it).
Result<uint64_t> union_of(const std::vector<std::string>& words, const char* flag) {
  uint64_t set = 0;
  for (const auto& w : words) {
    if (is_all(w)) continue;
    auto one = parse_cap(w);
    if (!one) return fail(std::move(one).error().with_context(flag));
    set |= *one;
  }
  return set;
}

}  // namespace

std::string_view cap_name(int cap) {
  if (cap < 0 || cap > kCapNamedLast) return {};
  return kNames[cap];
}

Result<uint64_t> parse_cap(std::string_view word) {
  if (is_all(word)) return kAll;
  std::string_view bare = word;
  if (bare.size() > 4 && iequals(bare.substr(0, 4), "CAP_")) bare.remove_prefix(4);
  for (int cap = 0; cap <= kCapNamedLast; ++cap)
    if (iequals(bare, kNames[cap].substr(4))) return bit(cap);
  return fail(ErrorKind::usage, 0,
              "unknown capability \"" + std::string(word) +
                  "\" (names are like CHOWN or CAP_NET_RAW, any case, or ALL)");
}

uint64_t all_caps() { return kAll; }
uint64_t default_caps() { return kDefault; }
uint64_t always_dropped_caps() { return kAlwaysDropped; }

Result<uint64_t> resolve_caps(const std::vector<std::string>& drop, const std::vector<std::string>& add) {
  KERN_TRY_ASSIGN(uint64_t drops, union_of(drop, "--cap-drop"));
  KERN_TRY_ASSIGN(uint64_t adds, union_of(add, "--cap-add"));

  uint64_t refused = adds & kAlwaysDropped;
  if (refused != 0) {
    int cap = __builtin_ctzll(refused);
    return fail(ErrorKind::usage, 0,
                "--cap-add " + std::string(kNames[cap].substr(4)) + ": " + std::string(kNames[cap]) +
                    " is always dropped in a kern box and cannot be added");
  }

  uint64_t keep;
  if (contains_all(add))
    keep = kAll & ~drops;
  else if (contains_all(drop))
    keep = adds;
  else
    keep = (kDefault & ~drops) | adds;
  return keep & ~kAlwaysDropped;
}

std::vector<std::string> cap_names(uint64_t caps) {
  std::vector<std::string> out;
  for (int cap = 0; cap < 64; ++cap) {
    if ((caps & bit(cap)) == 0) continue;
    out.push_back(cap <= kCapNamedLast ? std::string(kNames[cap]) : "CAP_" + std::to_string(cap));
  }
  return out;
}

std::string cap_list(uint64_t caps) {
  if (caps == 0) return "none";
  std::string out;
  for (const auto& name : cap_names(caps)) out += (out.empty() ? "" : ",") + name;
  return out;
}

int read_last_cap() noexcept {
  int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CAP_LAST_CAP;
  char buf[16];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return CAP_LAST_CAP;
  int value = 0;
  ssize_t i = 0;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) value = value * 10 + (buf[i] - '0');
  if (i == 0 || value > 63) return CAP_LAST_CAP;
  return value;
}

namespace {

// Securebits: each lock bit sits one above the bit it locks. A locked bit keeps its value (the
// kernel refuses to change it, and every such bit only ever takes privileges away); the others
// are cleared so the plain rules apply. Then the bounding set, which caps what any later execve
// can grant (uid 0 or setuid file alike), reduced to `keep`. Both need CAP_SETPCAP, so they come
// before the id switch and capset take it away.
int securebits_and_bounding(uint64_t keep, int last_cap) noexcept {
  int secure = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
  if (secure < 0) return errno;
  int wanted = 0;
  for (int base = 0; base < 16; base += 2) {
    int lock = 1 << (base + 1);
    if (secure & lock) wanted |= lock | (secure & (1 << base));
  }
  if (wanted != secure && prctl(PR_SET_SECUREBITS, wanted, 0, 0, 0) != 0) return errno;
  if (last_cap > 63) last_cap = 63;
  for (int cap = 0; cap <= last_cap; ++cap) {
    if (keep & bit(cap)) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  }
  return 0;
}

}  // namespace

int switch_ids_raw(uid_t uid, gid_t gid) noexcept {
  // The kernel clears the parent-death signal when the effective ids change; a box and a
  // joined process rely on it to die with kern, so it is put back. A parent that died between
  // the change and the restore sent nothing: the parent pid then differs (the process was
  // re-parented), which is reported as ESRCH rather than left running.
  int pdeathsig = 0;
  if (prctl(PR_GET_PDEATHSIG, &pdeathsig, 0, 0, 0) != 0) return errno;
  long parent = syscall(SYS_getppid);
  if (syscall(SYS_setresgid, gid, gid, gid) != 0) return errno;
  if (syscall(SYS_setresuid, uid, uid, uid) != 0) return errno;
  if (pdeathsig == 0) return 0;
  if (prctl(PR_SET_PDEATHSIG, pdeathsig, 0, 0, 0) != 0) return errno;
  return syscall(SYS_getppid) == parent ? 0 : ESRCH;
}

Credentials box_credentials(uid_t uid, gid_t gid, bool switch_ids, uint64_t keep) {
  Credentials c;
  c.uid = uid;
  c.gid = gid;
  c.switch_ids = switch_ids;
  keep &= ~kAlwaysDropped;
  c.caps.bounding = keep;
  if (!switch_ids || uid == 0) c.caps.effective = c.caps.permitted = keep;
  return c;
}

int apply_credentials_raw(const Credentials& c, int last_cap) noexcept {
  if (int r = securebits_and_bounding(c.caps.bounding, last_cap); r != 0) return r;
  if (last_cap > 63) last_cap = 63;
  // Raw syscalls, not the libc wrappers: glibc's set*id broadcast the change to every thread it
  // believes exists, and after clone its thread list is the parent's.
  if (syscall(SYS_setgroups, c.groups.size(), c.groups.data()) != 0 && !(errno == EPERM && c.groups.empty()))
    return errno;
  if (c.switch_ids) {
    // Without KEEPCAPS a switch away from uid 0 would clear the permitted set before capset.
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return errno;
    if (int r = switch_ids_raw(c.uid, c.gid); r != 0) return r;
    if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0) return errno;
  }
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; ++i) {
    data[i].effective = static_cast<uint32_t>(c.caps.effective >> (32 * i));
    data[i].permitted = static_cast<uint32_t>(c.caps.permitted >> (32 * i));
    data[i].inheritable = static_cast<uint32_t>(c.caps.inheritable >> (32 * i));
  }
  if (syscall(SYS_capset, &header, data) != 0) return errno;
  // EINVAL: a kernel without ambient capabilities has none to clear.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  for (int cap = 0; cap <= last_cap; ++cap) {
    if (!(c.caps.ambient & bit(cap))) continue;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return errno;
  }
  return 0;
}

}  // namespace kern
