// The cgroup v2 device program: run against requests in an interpreter of the few BPF
// instructions it uses, so the decisions (last match wins, default deny, defaults kept) are
// checked without the kernel; and loaded into the kernel where this process may.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "runtime/cgroup/device_program.h"
#include "runtime/cgroup/subtree.h"
#include "tests/unit/test_require.h"

namespace kern::bundle {
namespace {

// Executes `p` on (type, access, major, minor); only the instructions device_program emits.
int run(const std::vector<struct bpf_insn>& p, uint32_t type, uint32_t access, uint32_t major, uint32_t minor) {
  uint32_t ctx[3] = {(access << 16) | type, major, minor};
  uint64_t r[11] = {};
  for (size_t pc = 0; pc < p.size(); ++pc) {
    const auto& i = p[pc];
    switch (i.code) {
      case BPF_LDX | BPF_MEM | BPF_W: r[i.dst_reg] = ctx[i.off / 4]; break;
      case BPF_ALU64 | BPF_MOV | BPF_X: r[i.dst_reg] = r[i.src_reg]; break;
      case BPF_ALU64 | BPF_MOV | BPF_K: r[i.dst_reg] = static_cast<uint64_t>(static_cast<int64_t>(i.imm)); break;
      case BPF_ALU64 | BPF_AND | BPF_K: r[i.dst_reg] &= static_cast<uint64_t>(static_cast<int64_t>(i.imm)); break;
      case BPF_ALU64 | BPF_RSH | BPF_K: r[i.dst_reg] >>= i.imm; break;
      case BPF_JMP | BPF_JNE | BPF_K:
        if (r[i.dst_reg] != static_cast<uint64_t>(static_cast<int64_t>(i.imm))) pc += i.off;
        break;
      case BPF_JMP | BPF_EXIT: return static_cast<int>(r[0]);
      default: ADD_FAILURE() << "unexpected instruction " << int(i.code); return -1;
    }
  }
  ADD_FAILURE() << "ran off the end";
  return -1;
}

constexpr uint32_t C = BPF_DEVCG_DEV_CHAR, B = BPF_DEVCG_DEV_BLOCK;
constexpr uint32_t R = BPF_DEVCG_ACC_READ, W = BPF_DEVCG_ACC_WRITE, M = BPF_DEVCG_ACC_MKNOD;

DeviceRule rule(bool allow, const char* type, std::optional<int64_t> major, std::optional<int64_t> minor,
                const char* access) {
  DeviceRule d;
  d.allow = allow;
  d.type = type;
  d.major = major;
  d.minor = minor;
  d.access = access;
  return d;
}

TEST(DeviceProgram, DenyAllKeepsTheDefaultDevicesOnly) {
  auto p = device_program(effective_device_rules({rule(false, "a", {}, {}, "rwm")}));
  EXPECT_EQ(run(p, C, R | W, 1, 3), 1);    // /dev/null
  EXPECT_EQ(run(p, C, R, 136, 7), 1);      // /dev/pts/7
  EXPECT_EQ(run(p, B, R, 8, 0), 0);        // /dev/sda
  EXPECT_EQ(run(p, B, M, 8, 0), 0);        // mknod of it
  EXPECT_EQ(run(p, C, R, 1, 1), 0);        // /dev/mem
}

TEST(DeviceProgram, LastMatchWinsAndAccessMustBeWithinTheRule) {
  auto p = device_program({rule(false, "a", {}, {}, "rwm"), rule(true, "c", 10, 229, "rw"),
                           rule(false, "c", 10, {}, "w")});
  EXPECT_EQ(run(p, C, R, 10, 229), 1);      // allowed, and the later deny is for writes only
  EXPECT_EQ(run(p, C, W, 10, 229), 0);      // the later rule denies writes to every 10:*
  EXPECT_EQ(run(p, C, M, 10, 229), 0);      // mknod was never in the allow rule
  EXPECT_EQ(run(p, B, R, 10, 229), 0);      // type differs
}

Device node(const char* type, const char* path, int64_t major, int64_t minor) {
  Device d;
  d.type = type;
  d.path = path;
  d.major = major;
  d.minor = minor;
  return d;
}

// linux.devices makes a node; only resources.devices says what may be done with it (as runc).
// Before, every node got an "allow rwm" after the configured rules, and the last match won: a
// device the engine allowed read-only (podman --device X:r) was writable.
TEST(DeviceProgram, ANodeOfLinuxDevicesIsUsedAsTheConfiguredRulesSay) {
  auto p = device_program(effective_device_rules(
      {rule(false, "a", {}, {}, "rwm"), rule(true, "c", 10, 200, "r")},
      {node("c", "/dev/net/tun", 10, 200), node("b", "/dev/loop7", 7, 7)}));
  EXPECT_EQ(run(p, C, R, 10, 200), 1);  // read, as allowed
  EXPECT_EQ(run(p, C, W, 10, 200), 0);  // the engine said "r"
  EXPECT_EQ(run(p, C, M, 10, 200), 1);  // create makes the node in the container's cgroup
  EXPECT_EQ(run(p, B, R, 7, 7), 0);     // a node no rule allows: made, never opened
  EXPECT_EQ(run(p, B, M, 7, 7), 1);
  EXPECT_EQ(run(p, B, M, 8, 0), 0);     // mknod of a node linux.devices does not name
  EXPECT_EQ(run(p, C, R | W, 1, 3), 1); // the defaults stay
}

// A default device that linux.devices names itself is the configuration's to allow (runc drops
// its default rule too); the other defaults stay.
TEST(DeviceProgram, ADefaultDeviceGivenInLinuxDevicesFollowsTheConfiguredRules) {
  auto p = device_program(effective_device_rules({rule(false, "a", {}, {}, "rwm"), rule(true, "c", 1, 3, "r")},
                                                 {node("c", "/dev/null", 1, 3)}));
  EXPECT_EQ(run(p, C, R, 1, 3), 1);
  EXPECT_EQ(run(p, C, W, 1, 3), 0);
  EXPECT_EQ(run(p, C, R | W, 1, 5), 1);  // /dev/zero, not named
}

TEST(DeviceProgram, NoRulesMeansDeny) {
  auto p = device_program({});
  EXPECT_EQ(run(p, C, R, 1, 3), 0);
}

TEST(DeviceProgram, TheKernelAcceptsIt) {
  // Loading needs CAP_SYS_ADMIN (or CAP_BPF) on the host: as anyone else this says so.
  auto p = device_program(effective_device_rules({rule(false, "a", {}, {}, "rwm")}));
  union bpf_attr load {};
  static const char lic[] = "Apache-2.0";
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insn_cnt = static_cast<uint32_t>(p.size());
  load.insns = reinterpret_cast<uint64_t>(p.data());
  load.license = reinterpret_cast<uint64_t>(lic);
  int fd = static_cast<int>(::syscall(SYS_bpf, BPF_PROG_LOAD, &load, sizeof load));
  if (fd < 0 && errno == ENOSYS)
    KERN_SKIP_UNLESS_REQUIRED("bpf-syscall", "bpf(2) answers ENOSYS here (qemu-user has no bpf for its guest)");
  if (fd < 0 && (errno == EPERM || errno == EACCES)) GTEST_SKIP() << "bpf(BPF_PROG_LOAD) needs privileges here";
  ASSERT_GE(fd, 0) << "the verifier refused the program: errno " << errno;
  ::close(fd);
}

// The claim itself, two ways, as root where a cgroup v2 can be made: with CAP_MKNOD a process in
// the cgroup the program is attached to cannot make a disk's node but may open /dev/null; the
// same process outside it makes the node (so the refusal is the program's, not a missing cap).
int mknod_in(const std::string& procs, const std::string& node) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!procs.empty()) {
      int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0", 1) != 1) _exit(200);
      ::close(fd);
    }
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) _exit(201);
    _exit(::mknod(node.c_str(), S_IFBLK | 0600, makedev(8, 0)) == 0 ? 0 : errno);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::unlink(node.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DeviceProgram, AttachedItRefusesMknodInsideAndNotOutside) {
  if (::geteuid() != 0) GTEST_SKIP() << "attaching a cgroup device program needs root";
  auto host = probe_cgroup_host();
  if (!host || host->mount.empty()) GTEST_SKIP() << "no cgroup v2 mounted";
  if (::syscall(SYS_bpf, -1, nullptr, 0) < 0 && errno == ENOSYS)
    KERN_SKIP_UNLESS_REQUIRED("bpf-syscall", "bpf(2) answers ENOSYS here (qemu-user has no bpf for its guest)");
  std::string dir = host->mount + "/kern-devtest-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir;
  int cg = ::open(dir.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  ASSERT_GE(cg, 0);
  auto attached = attach_device_program(cg, device_program(effective_device_rules({rule(false, "a", {}, {}, "rwm")})));
  ::close(cg);
  ASSERT_TRUE(attached.has_value()) << attached.error().what();
  std::string node = "/tmp/kern-devtest-node-" + std::to_string(::getpid());
  EXPECT_EQ(mknod_in(dir + "/cgroup.procs", node), EPERM) << "mknod of 8:0 inside the confined cgroup";
  EXPECT_EQ(mknod_in("", node), 0) << "control: the same mknod outside it";
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace kern::bundle
