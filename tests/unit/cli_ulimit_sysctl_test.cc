// --ulimit and --sysctl as the command line reads them (cli/ulimit_flags.h, cli/sysctl_flags.h),
// and where a --sysctl lands in the mount plan.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>

#include "cli/sysctl_flags.h"
#include "cli/ulimit_flags.h"
#include "runtime/mount_plan.h"

namespace kern::cli {
namespace {

TEST(Ulimit, DockerSpellings) {
  auto r = parse_ulimit("nofile=64:128");
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->resource, RLIMIT_NOFILE);
  EXPECT_EQ(r->soft, 64u);
  EXPECT_EQ(r->hard, 128u);
  EXPECT_EQ(r->name, "RLIMIT_NOFILE");
  r = parse_ulimit("CORE=0");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resource, RLIMIT_CORE);
  EXPECT_EQ(r->hard, 0u) << "HARD is SOFT when left out";
  r = parse_ulimit("stack=-1:unlimited");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->soft, RLIM_INFINITY);
  EXPECT_EQ(r->hard, RLIM_INFINITY);
  for (const char* bad : {"nofile", "=1", "nofiles=1", "nofile=2:1", "nofile=x", "nofile=1:", "nofile=-2", "nofile=1:2:3"})
    EXPECT_FALSE(parse_ulimit(bad)) << bad;
}

TEST(Ulimit, NoRaiseAboveKernsOwnHardLimit) {
  struct rlimit cur;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &cur), 0);
  EXPECT_TRUE(check_ulimits({{RLIMIT_NOFILE, 1, 1, "RLIMIT_NOFILE"}}));
  if (cur.rlim_max != RLIM_INFINITY) {
    auto s = check_ulimits({{RLIMIT_NOFILE, 1, cur.rlim_max + 1, "RLIMIT_NOFILE"}});
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().what().find("is above it"), std::string::npos);
  }
}

TEST(Sysctl, NamespacedKnobsOnly) {
  auto k = parse_sysctl("net.ipv4.ip_unprivileged_port_start=80", NetMode::none);
  ASSERT_TRUE(k) << k.error().what();
  EXPECT_EQ(k->first, "/proc/sys/net/ipv4/ip_unprivileged_port_start");
  EXPECT_EQ(k->second, "80");
  k = parse_sysctl("net/ipv4/conf/eth0.1/rp_filter=1", NetMode::private_net);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->first, "/proc/sys/net/ipv4/conf/eth0.1/rp_filter");
  EXPECT_TRUE(parse_sysctl("kernel.shm_rmid_forced=1", NetMode::host)) << "the IPC namespace is always the box's";
  EXPECT_TRUE(parse_sysctl("fs.mqueue.msg_max=20", NetMode::none));
  EXPECT_TRUE(parse_sysctl("kernel.domainname=example", NetMode::none));
  EXPECT_TRUE(parse_sysctl("kernel.sem=250 32000 32 128", NetMode::none));
  for (const char* bad : {"kernel.pid_max=1", "vm.swappiness=1", "kernel.hostname=x", "=1", "net", "fs.file-max=1",
                          "net/../kernel/pid_max=1", "/net/ipv4/ip_forward=1", "net.ipv4.ip_forward=1\n2"})
    EXPECT_FALSE(parse_sysctl(bad, NetMode::none)) << bad;
  EXPECT_FALSE(parse_sysctl("net.ipv4.ip_forward=1", NetMode::host));
}

TEST(Sysctl, WrittenAfterProcBeforeItIsReadOnly) {
  BoxSpec spec;
  spec.lower_dirs = {"/lower"};
  spec.sysctls = {{"/proc/sys/kernel/shm_rmid_forced", "1"}};
  auto plan = build_mount_plan(spec);
  auto at = [&](MountStepKind k, const std::string& target) {
    return std::find_if(plan.begin(), plan.end(), [&](const MountStep& s) { return s.kind == k && s.target == target; });
  };
  auto proc = at(MountStepKind::proc, "/proc");
  auto write = at(MountStepKind::proc_write, "/proc/sys/kernel/shm_rmid_forced");
  auto ro = at(MountStepKind::readonly_rebind, "/proc/sys");
  ASSERT_NE(write, plan.end());
  EXPECT_LT(proc, write);
  EXPECT_LT(write, ro);
  EXPECT_EQ(write->content, "1");
  EXPECT_EQ(describe_step(*write), "proc-write /proc/sys/kernel/shm_rmid_forced = 1 (--sysctl)");
}

TEST(Secret, ATmpfsOfItsOwnThenReadOnly) {
  BoxSpec spec;
  spec.lower_dirs = {"/lower"};
  spec.uid = 1000;
  spec.gid = 1001;
  spec.secrets = {{"db", "hunter2"}};
  auto plan = build_mount_plan(spec);
  auto at = [&](MountStepKind k, const std::string& target) {
    return std::find_if(plan.begin(), plan.end(), [&](const MountStep& s) { return s.kind == k && s.target == target; });
  };
  auto fs = at(MountStepKind::tmpfs, "/run/secrets");
  auto file = at(MountStepKind::secret_file, "/run/secrets/db");
  auto ro = at(MountStepKind::readonly_rebind, "/run/secrets");
  ASSERT_NE(file, plan.end());
  EXPECT_LT(fs, file);
  EXPECT_LT(file, ro);
  EXPECT_NE(ro, plan.end());
  EXPECT_EQ(file->mode, 0400u);
  EXPECT_EQ(file->uid, 1000u);
  EXPECT_EQ(file->gid, 1001u);
  // --plan shows its size, never its bytes.
  EXPECT_EQ(describe_step(*file), "secret-file /run/secrets/db (7 bytes) (--secret)");
}

}  // namespace
}  // namespace kern::cli
