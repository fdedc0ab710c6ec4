// The cgroup v2 device program (see device_program.h).
#include "runtime/cgroup/device_program.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace kern::bundle {

namespace {

struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  struct bpf_insn i;
  std::memset(&i, 0, sizeof i);
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

uint32_t access_bits(const std::string& access) {
  uint32_t a = 0;
  for (char c : access) {
    if (c == 'r') a |= BPF_DEVCG_ACC_READ;
    if (c == 'w') a |= BPF_DEVCG_ACC_WRITE;
    if (c == 'm') a |= BPF_DEVCG_ACC_MKNOD;
  }
  return a;
}

constexpr uint32_t kAllAccess = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;

DeviceRule allow_char(int64_t major, std::optional<int64_t> minor, const char* access = "rwm") {
  DeviceRule r;
  r.allow = true;
  r.type = "c";
  r.major = major;
  r.minor = minor;
  r.access = access;
  return r;
}

struct DefaultDevice {
  int64_t major;
  std::optional<int64_t> minor;
  const char* path;  // "" for the rules that name no single node
};

constexpr DefaultDevice kDefaultDevices[] = {
    {1, 3, "/dev/null"},   {1, 5, "/dev/zero"}, {1, 7, "/dev/full"}, {1, 8, "/dev/random"},
    {1, 9, "/dev/urandom"}, {5, 0, "/dev/tty"}, {5, 1, ""},          {5, 2, ""},
    {136, std::nullopt, ""},  // /dev/pts/*
};

}  // namespace

std::vector<DeviceRule> effective_device_rules(const std::vector<DeviceRule>& configured,
                                               const std::vector<Device>& nodes) {
  std::vector<DeviceRule> rules = configured;
  for (const auto& d : kDefaultDevices) {
    bool given = false;
    for (const auto& n : nodes) given = given || (d.path[0] != '\0' && n.path == d.path);
    if (!given) rules.push_back(allow_char(d.major, d.minor));
  }
  // The nodes are made in the container's cgroup (mknod): that much, and no more, is allowed.
  for (const auto& n : nodes) {
    if (n.type != "c" && n.type != "b" && n.type != "u") continue;  // a fifo needs no rule
    DeviceRule r = allow_char(n.major.value_or(0), n.minor.value_or(0), "m");
    r.type = n.type == "b" ? "b" : "c";
    rules.push_back(r);
  }
  return rules;
}

std::vector<struct bpf_insn> device_program(const std::vector<DeviceRule>& rules) {
  // r2 = type, r3 = access, r4 = major, r5 = minor (struct bpf_cgroup_dev_ctx).
  std::vector<struct bpf_insn> p = {
      insn(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0),
      insn(BPF_ALU64 | BPF_MOV | BPF_X, 3, 2, 0, 0),
      insn(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, 0xffff),
      insn(BPF_ALU64 | BPF_RSH | BPF_K, 3, 0, 0, 16),
      insn(BPF_LDX | BPF_MEM | BPF_W, 4, 1, 4, 0),
      insn(BPF_LDX | BPF_MEM | BPF_W, 5, 1, 8, 0),
  };
  // The last matching rule decides: the rules are tested from the last one back.
  for (auto it = rules.rbegin(); it != rules.rend(); ++it) {
    const DeviceRule& r = *it;
    std::vector<struct bpf_insn> block;
    block.reserve(10);
    std::vector<size_t> jumps;  // indexes of "goto next" instructions in block
    if (r.type == "c" || r.type == "b") {
      jumps.push_back(block.size());
      block.push_back(insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, 0,
                           r.type == "c" ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
    }
    uint32_t acc = access_bits(r.access);
    if (acc != kAllAccess) {
      // The access asked for must be within the rule's: (asked & ~rule) == 0.
      block.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_X, 6, 3, 0, 0));
      block.push_back(insn(BPF_ALU64 | BPF_AND | BPF_K, 6, 0, 0, static_cast<int32_t>(~acc & kAllAccess)));
      jumps.push_back(block.size());
      block.push_back(insn(BPF_JMP | BPF_JNE | BPF_K, 6, 0, 0, 0));
    }
    if (r.major && *r.major >= 0) {
      jumps.push_back(block.size());
      block.push_back(insn(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 0, static_cast<int32_t>(*r.major)));
    }
    if (r.minor && *r.minor >= 0) {
      jumps.push_back(block.size());
      block.push_back(insn(BPF_JMP | BPF_JNE | BPF_K, 5, 0, 0, static_cast<int32_t>(*r.minor)));
    }
    block.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, r.allow ? 1 : 0));
    block.push_back(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    for (size_t j : jumps) block[j].off = static_cast<int16_t>(block.size() - j - 1);
    p.insert(p.end(), block.begin(), block.end());
    // A rule that matches everything decides every request: what follows could never run, and
    // the verifier refuses unreachable instructions.
    if (jumps.empty()) return p;
  }
  p.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
  p.push_back(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  return p;
}

Status attach_device_program(int cgroup_fd, const std::vector<struct bpf_insn>& prog) {
  static const char kLicense[] = "Apache-2.0";
  union bpf_attr load;
  std::memset(&load, 0, sizeof load);
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insn_cnt = static_cast<uint32_t>(prog.size());
  load.insns = reinterpret_cast<uint64_t>(prog.data());
  load.license = reinterpret_cast<uint64_t>(kLicense);
  int fd = static_cast<int>(::syscall(SYS_bpf, BPF_PROG_LOAD, &load, sizeof load));
  if (fd < 0) return fail_errno("bpf BPF_PROG_LOAD (cgroup device program)", ErrorKind::host_unsupported);
  union bpf_attr at;
  std::memset(&at, 0, sizeof at);
  at.target_fd = static_cast<uint32_t>(cgroup_fd);
  at.attach_bpf_fd = static_cast<uint32_t>(fd);
  at.attach_type = BPF_CGROUP_DEVICE;
  at.attach_flags = BPF_F_ALLOW_MULTI;
  int rc = static_cast<int>(::syscall(SYS_bpf, BPF_PROG_ATTACH, &at, sizeof at));
  int err = errno;
  ::close(fd);  // the attachment holds the program
  if (rc != 0) return fail(Error(ErrorKind::host_unsupported, err, "bpf BPF_PROG_ATTACH (cgroup device program)"));
  return {};
}

}  // namespace kern::bundle
