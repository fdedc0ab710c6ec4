// config.json -> bundle::Config: good documents, hostile ones (wrong types refused with the JSON
// path, unknown members ignored), and what check_supported refuses.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <string>

#include "runtime/bundle/config.h"
#include "runtime/bundle/spec_names.h"
#include "runtime/caps.h"

namespace kern::bundle {
namespace {

// A complete Linux document written for these tests: every member kern reads.
const char* kFull = R"({
  "ociVersion": "1.2.0",
  "root": {"path": "rootfs", "readonly": true},
  "process": {
    "terminal": true, "consoleSize": {"height": 24, "width": 80},
    "user": {"uid": 1000, "gid": 1001, "umask": 18, "additionalGids": [5, 6]},
    "args": ["sh", "-c", "echo hi"], "env": ["PATH=/bin", "TERM=xterm"], "cwd": "/work",
    "capabilities": {"bounding": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL"],
                     "permitted": ["CAP_KILL"], "ambient": []},
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 512}],
    "noNewPrivileges": true, "oomScoreAdj": -100
  },
  "hostname": "box", "domainname": "example.org",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/data", "type": "bind", "source": "/srv/data", "options": ["rbind", "ro", "rprivate"],
     "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}]}
  ],
  "hooks": {"createRuntime": [{"path": "/usr/bin/hook", "args": ["hook", "create"], "timeout": 5}],
            "poststop": [{"path": "/usr/bin/cleanup"}]},
  "annotations": {"io.kern.report-fd": "3"},
  "linux": {
    "namespaces": [{"type": "pid"}, {"type": "network", "path": "/proc/1/ns/net"}, {"type": "mount"}, {"type": "time"}],
    "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
    "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
    "devices": [{"type": "c", "path": "/dev/fuse", "major": 10, "minor": 229, "fileMode": 438, "uid": 0, "gid": 0}],
    "resources": {
      "memory": {"limit": 536870912, "swap": 536870912, "swappiness": 0},
      "cpu": {"quota": 50000, "period": 100000, "cpus": "0-1", "shares": 1024},
      "pids": {"limit": 64},
      "blockIO": {"weight": 100, "throttleReadBpsDevice": [{"major": 8, "minor": 0, "rate": 1048576}]},
      "hugepageLimits": [{"pageSize": "2MB", "limit": 209715200}],
      "devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rw"}],
      "unified": {"memory.high": "400M"}
    },
    "cgroupsPath": "/kern/test",
    "sysctl": {"net.ipv4.ip_forward": "1"},
    "seccomp": {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1, "architectures": ["SCMP_ARCH_X86_64"],
                "syscalls": [{"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
                             {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
                              "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]},
    "rootfsPropagation": "slave",
    "maskedPaths": ["/proc/kcore"], "readonlyPaths": ["/proc/sys"],
    "personality": {"domain": "LINUX"}
  }
})";

TEST(BundleConfig, FullDocumentParses) {
  auto r = parse_config(kFull);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  const Config& c = *r;
  EXPECT_EQ(c.oci_version, "1.2.0");
  EXPECT_EQ(c.root_path, "rootfs");
  EXPECT_TRUE(c.root_readonly);
  ASSERT_TRUE(c.process);
  const Process& p = *c.process;
  EXPECT_TRUE(p.terminal);
  EXPECT_EQ(p.console_height.value_or(0), 24u);
  EXPECT_EQ(p.console_width.value_or(0), 80u);
  EXPECT_EQ(p.user.uid, 1000u);
  EXPECT_EQ(p.user.gid, 1001u);
  EXPECT_EQ(p.user.umask.value_or(0), 18u);
  EXPECT_EQ(p.user.additional_gids, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(p.args, (std::vector<std::string>{"sh", "-c", "echo hi"}));
  EXPECT_EQ(p.cwd, "/work");
  ASSERT_TRUE(p.capabilities);
  EXPECT_EQ(p.capabilities->bounding, (std::vector<std::string>{"CAP_KILL", "CAP_CHOWN"}));
  EXPECT_TRUE(p.capabilities->inheritable.empty());
  ASSERT_EQ(p.rlimits.size(), 1u);
  EXPECT_EQ(p.rlimits[0].type, "RLIMIT_NOFILE");
  EXPECT_EQ(p.rlimits[0].soft, 512u);
  EXPECT_TRUE(p.no_new_privileges);
  EXPECT_EQ(p.oom_score_adj.value_or(0), -100);
  EXPECT_EQ(c.hostname, "box");
  EXPECT_EQ(c.domainname, "example.org");
  ASSERT_EQ(c.mounts.size(), 3u);
  EXPECT_EQ(c.mounts[2].uid_mappings.size(), 1u);
  EXPECT_EQ(c.mounts[2].uid_mappings[0].host_id, 100000u);
  ASSERT_EQ(c.hooks.create_runtime.size(), 1u);
  EXPECT_EQ(c.hooks.create_runtime[0].timeout_s.value_or(0), 5);
  EXPECT_EQ(c.hooks.poststop.size(), 1u);
  EXPECT_EQ(c.annotations.at("io.kern.report-fd"), "3");
  ASSERT_TRUE(c.linux_config);
  const Linux& l = *c.linux_config;
  ASSERT_EQ(l.namespaces.size(), 4u);
  EXPECT_EQ(l.namespaces[1].type, "network");
  EXPECT_EQ(l.namespaces[1].path, "/proc/1/ns/net");
  EXPECT_EQ(l.namespaces[3].type, "time");
  EXPECT_EQ(l.uid_mappings.size(), 1u);
  ASSERT_EQ(l.devices.size(), 1u);
  EXPECT_EQ(l.devices[0].file_mode.value_or(0), 0666u);
  ASSERT_TRUE(l.resources);
  EXPECT_EQ(l.resources->memory_limit.value_or(0), 536870912);
  EXPECT_EQ(l.resources->cpu_quota.value_or(0), 50000);
  EXPECT_EQ(l.resources->cpu_cpus, "0-1");
  EXPECT_EQ(l.resources->pids_limit.value_or(0), 64);
  EXPECT_EQ(l.resources->io_weight.value_or(0), 100u);
  ASSERT_EQ(l.resources->io_read_bps.size(), 1u);
  EXPECT_EQ(l.resources->io_read_bps[0].rate, 1048576u);
  ASSERT_EQ(l.resources->hugepage_limits.size(), 1u);
  EXPECT_EQ(l.resources->hugepage_limits[0].first, "2MB");
  ASSERT_EQ(l.resources->devices.size(), 2u);
  EXPECT_FALSE(l.resources->devices[0].allow);
  EXPECT_FALSE(l.resources->devices[0].major.has_value());
  EXPECT_EQ(l.resources->unified.at("memory.high"), "400M");
  EXPECT_EQ(l.cgroups_path, "/kern/test");
  EXPECT_EQ(l.sysctl.at("net.ipv4.ip_forward"), "1");
  ASSERT_TRUE(l.seccomp);
  EXPECT_EQ(l.seccomp->default_action, "SCMP_ACT_ERRNO");
  EXPECT_EQ(l.seccomp->default_errno_ret.value_or(0), 1u);
  ASSERT_EQ(l.seccomp->syscalls.size(), 2u);
  ASSERT_EQ(l.seccomp->syscalls[1].args.size(), 1u);
  EXPECT_EQ(l.seccomp->syscalls[1].args[0].op, "SCMP_CMP_EQ");
  EXPECT_EQ(l.rootfs_propagation, "slave");
  EXPECT_EQ(l.masked_paths, (std::vector<std::string>{"/proc/kcore"}));
  EXPECT_EQ(l.readonly_paths, (std::vector<std::string>{"/proc/sys"}));
  EXPECT_EQ(l.personality_domain.value_or(""), "LINUX");
  EXPECT_TRUE(check_supported(c, HostFacts{}).has_value());
}

TEST(BundleConfig, MinimalDocumentParses) {
  auto r = parse_config(R"({"ociVersion": "1.0.2", "root": {"path": "/r"}, "process": {"cwd": "/", "args": ["true"]}})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_FALSE(r->root_readonly);
  EXPECT_FALSE(r->linux_config.has_value());
  EXPECT_EQ(r->process->user.uid, 0u);
}

TEST(BundleConfig, DeviceAccessLettersOtherThanRwmAreLeftOutAsRuncDoes) {
  // runc's update.bats denies /dev/kmsg with "rwa": runc reads "rw".
  auto r = parse_config(R"({"ociVersion": "1.0.2", "root": {"path": "/r"},
      "linux": {"resources": {"devices": [{"allow": false, "type": "c", "major": 1, "minor": 11, "access": "rwa"}]}}})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  const auto& d = r->linux_config->resources->devices.at(0);
  EXPECT_EQ(d.access, "rw");
  EXPECT_EQ(d.access_ignored, "a");
}

TEST(BundleConfig, VersionsOfTheSpecificationAreRead) {
  for (const char* v : {"1.0.0", "1.0.2-dev", "1.1.0-rc.1", "1.2.0", "1.3.0", "1.10.12"}) {
    std::string doc = std::string(R"({"ociVersion": ")") + v + R"(", "root": {"path": "r"}})";
    auto r = parse_config(doc);
    ASSERT_TRUE(r.has_value()) << v << ": " << r.error().what();
    EXPECT_EQ(r->oci_version, v);
  }
}

TEST(BundleConfig, EveryLinuxRlimitAndCapabilityIsRead) {
  std::string rl, caps;
  for (auto t : kRlimitTypes)
    rl += std::string(rl.empty() ? "" : ", ") + R"({"type": ")" + std::string(t) + R"(", "soft": 1, "hard": 2})";
  for (int i = 0; i <= kCapNamedLast; ++i) caps += std::string(caps.empty() ? "\"" : ", \"") + std::string(cap_name(i)) + "\"";
  std::string doc = R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "rlimits": [)" + rl +
                    R"(], "capabilities": {"bounding": [)" + caps + R"(], "ambient": [)" + caps + "]}}}";
  auto r = parse_config(doc);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(r->process->rlimits.size(), 16u);
  EXPECT_EQ(r->process->capabilities->bounding.size(), 41u);
}

// kRlimitTypes is indexed by resource number; the launch code maps names through it.
TEST(BundleConfig, RlimitTypesAreIndexedByResourceNumber) {
  EXPECT_EQ(kRlimitTypes[RLIMIT_CPU], "RLIMIT_CPU");
  EXPECT_EQ(kRlimitTypes[RLIMIT_FSIZE], "RLIMIT_FSIZE");
  EXPECT_EQ(kRlimitTypes[RLIMIT_DATA], "RLIMIT_DATA");
  EXPECT_EQ(kRlimitTypes[RLIMIT_STACK], "RLIMIT_STACK");
  EXPECT_EQ(kRlimitTypes[RLIMIT_CORE], "RLIMIT_CORE");
  EXPECT_EQ(kRlimitTypes[RLIMIT_RSS], "RLIMIT_RSS");
  EXPECT_EQ(kRlimitTypes[RLIMIT_NPROC], "RLIMIT_NPROC");
  EXPECT_EQ(kRlimitTypes[RLIMIT_NOFILE], "RLIMIT_NOFILE");
  EXPECT_EQ(kRlimitTypes[RLIMIT_MEMLOCK], "RLIMIT_MEMLOCK");
  EXPECT_EQ(kRlimitTypes[RLIMIT_AS], "RLIMIT_AS");
  EXPECT_EQ(kRlimitTypes[RLIMIT_LOCKS], "RLIMIT_LOCKS");
  EXPECT_EQ(kRlimitTypes[RLIMIT_SIGPENDING], "RLIMIT_SIGPENDING");
  EXPECT_EQ(kRlimitTypes[RLIMIT_MSGQUEUE], "RLIMIT_MSGQUEUE");
  EXPECT_EQ(kRlimitTypes[RLIMIT_NICE], "RLIMIT_NICE");
  EXPECT_EQ(kRlimitTypes[RLIMIT_RTPRIO], "RLIMIT_RTPRIO");
  EXPECT_EQ(kRlimitTypes[RLIMIT_RTTIME], "RLIMIT_RTTIME");
  EXPECT_EQ(kRlimitTypes.size(), static_cast<size_t>(RLIMIT_NLIMITS));
}

TEST(BundleConfig, UnknownMembersAreIgnored) {
  auto r = parse_config(R"({"ociVersion": "1.2.0", "future": {"x": [1]}, "root": {"path": "r", "shiny": 1},
    "process": {"cwd": "/", "args": ["a"], "novel": true}, "linux": {"brandNew": "x"}, "solaris": {"anet": []}})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(r->process->args, (std::vector<std::string>{"a"}));
}

// What podman writes: rootfsPropagation "rslave" (rootless --privileged; Kubernetes writes
// "rshared"), and a device's fileMode as st_mode whole (0o20666 for a character device, 0o60660
// for a block device): the type bits dropped when they are the node's type, as runc does.
TEST(BundleConfig, WhatPodmanWritesIsRead) {
  for (const char* p : {"rslave", "rshared", "rprivate", "runbindable"}) {
    std::string doc = R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "linux": {"rootfsPropagation": "X"}})";
    doc.replace(doc.find('X'), 1, p);
    auto r = parse_config(doc);
    ASSERT_TRUE(r.has_value()) << p << ": " << r.error().what();
    EXPECT_EQ(r->linux_config->rootfs_propagation, p);
  }
  auto r = parse_config(R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "linux": {"devices": [
    {"type": "c", "path": "/dev/fuse", "major": 10, "minor": 229, "fileMode": 8630},
    {"type": "b", "path": "/dev/loop0", "major": 7, "minor": 0, "fileMode": 25008},
    {"type": "p", "path": "/dev/fifo", "fileMode": 4516}]}})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(*r->linux_config->devices[0].file_mode, 0666u);
  EXPECT_EQ(*r->linux_config->devices[1].file_mode, 0660u);
  EXPECT_EQ(*r->linux_config->devices[2].file_mode, 0644u);
}

TEST(BundleConfig, NullIsAbsent) {
  auto r = parse_config(R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "mounts": null,
    "process": {"cwd": "/", "args": ["a"], "env": null}})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_TRUE(r->mounts.empty());
}

struct Hostile {
  const char* doc;
  const char* message;  // what() must equal this
};

class BundleConfigHostile : public ::testing::TestWithParam<Hostile> {};

TEST_P(BundleConfigHostile, RefusedWithThePath) {
  auto r = parse_config(GetParam().doc);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind(), ErrorKind::config);
  EXPECT_EQ(r.error().what(), GetParam().message);
}

#define BASE R"("ociVersion": "1.2.0", "root": {"path": "r"})"
INSTANTIATE_TEST_SUITE_P(
    Documents, BundleConfigHostile,
    ::testing::Values(
        Hostile{"not json", "not a JSON document"},
        Hostile{"[1]", "(document): expected an object"},
        Hostile{R"({"root": {"path": "r"}})", "ociVersion: required"},
        Hostile{R"({"ociVersion": 1})", "ociVersion: expected a string"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "args": ["a", "b", 3]}})", "process.args[2]: expected a string"},
        Hostile{"{" BASE R"(, "process": {"args": ["a"]}})", "process.cwd: required"},
        Hostile{"{" BASE R"(, "process": {"cwd": "rel", "args": ["a"]}})", "process.cwd: must be an absolute path"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "user": {"uid": -1}}})", "process.user.uid: expected an integer of at least 0"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "user": {"uid": 4294967296}}})",
                "process.user.uid: out of range for a 32-bit unsigned integer"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "user": {"additionalGids": [1, "2"]}}})",
                "process.user.additionalGids[1]: expected an integer"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "terminal": "yes"}})", "process.terminal: expected a boolean"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "consoleSize": {"height": 1}}})", "process.consoleSize.width: required"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "capabilities": {"effective": "CAP_KILL"}}})",
                "process.capabilities.effective: expected an array"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "rlimits": [{"type": "NOFILE", "soft": 1, "hard": 1}]}})",
                "process.rlimits[0].type: unknown value \"NOFILE\""},
        // runtime-tools process_rlimits_fail: a type that maps to no kernel limit is an error.
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "rlimits": [{"type": "RLIMIT_TEST", "soft": 1, "hard": 1}]}})",
                "process.rlimits[0].type: unknown value \"RLIMIT_TEST\""},
        // runtime-tools process_capabilities_fail: so is a capability the kernel does not have.
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "capabilities": {"bounding": ["CAP_KILL", "CAP_TEST"]}}})",
                "process.capabilities.bounding[1]: unknown capability \"CAP_TEST\""},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "capabilities": {"ambient": ["kill"]}}})",
                "process.capabilities.ambient[0]: unknown capability \"kill\""},
        // runtime-tools misc_props: an ociVersion that is no version of the specification.
        Hostile{R"({"ociVersion": "invalid", "root": {"path": "r"}})",
                "ociVersion: expected a version 1.x.y of the runtime specification, got \"invalid\""},
        Hostile{R"({"ociVersion": "2.0.0", "root": {"path": "r"}})",
                "ociVersion: expected a version 1.x.y of the runtime specification, got \"2.0.0\""},
        Hostile{R"({"ociVersion": "1.2", "root": {"path": "r"}})",
                "ociVersion: expected a version 1.x.y of the runtime specification, got \"1.2\""},
        Hostile{R"({"ociVersion": "1.2.0-", "root": {"path": "r"}})",
                "ociVersion: expected a version 1.x.y of the runtime specification, got \"1.2.0-\""},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 1.5, "hard": 1}]}})",
                "process.rlimits[0].soft: expected an integer"},
        Hostile{"{" BASE R"(, "process": {"cwd": "/", "oomScoreAdj": 1e40}})", "process.oomScoreAdj: expected an integer"},
        Hostile{"{" BASE R"(, "root": {"readonly": true}})", "root.path: required"},
        Hostile{"{" BASE R"(, "mounts": [{"destination": "/a"}, {"type": "tmpfs"}]})", "mounts[1].destination: required"},
        Hostile{"{" BASE R"(, "mounts": [{"destination": "a"}]})", "mounts[0].destination: must be an absolute path, got \"a\""},
        Hostile{"{" BASE R"(, "mounts": [{"destination": "/a", "options": ["ro", 1]}]})", "mounts[0].options[1]: expected a string"},
        Hostile{"{" BASE R"(, "mounts": {"destination": "/a"}})", "mounts: expected an array"},
        Hostile{"{" BASE R"(, "hooks": {"poststart": [{"args": []}]}})", "hooks.poststart[0].path: required"},
        Hostile{"{" BASE R"(, "hooks": {"prestart": [{"path": "/h", "timeout": 0}]}})", "hooks.prestart[0].timeout: must be at least 1"},
        Hostile{"{" BASE R"(, "annotations": {"a": 1}})", "annotations.a: expected a string"},
        Hostile{"{" BASE R"(, "linux": {"namespaces": [{"type": "pid"}, {"type": "pid"}]}})",
                "linux.namespaces[1].type: namespace \"pid\" is given twice"},
        Hostile{"{" BASE R"(, "linux": {"namespaces": [{"type": "net"}]}})", "linux.namespaces[0].type: unknown value \"net\""},
        Hostile{"{" BASE R"(, "linux": {"uidMappings": [{"containerID": 0, "hostID": 0}]}})", "linux.uidMappings[0].size: required"},
        Hostile{"{" BASE R"(, "linux": {"devices": [{"type": "x", "path": "/dev/x"}]}})",
                "linux.devices[0].type: expected one of c, b, u, p, got \"x\""},
        Hostile{"{" BASE R"(, "linux": {"devices": [{"type": "c", "path": "/dev/x"}]}})",
                "linux.devices[0]: a device of type c needs major and minor"},
        Hostile{"{" BASE R"(, "linux": {"resources": {"memory": {"limit": "1G"}}}})", "linux.resources.memory.limit: expected an integer"},
        Hostile{"{" BASE R"(, "linux": {"resources": {"pids": {}}}})", "linux.resources.pids.limit: required"},
        Hostile{"{" BASE R"(, "linux": {"resources": {"unified": {"memory.max": 5}}}})",
                "linux.resources.unified.memory.max: expected a string"},
        Hostile{"{" BASE R"(, "linux": {"seccomp": {"defaultAction": "SCMP_ACT_MAYBE"}}})",
                "linux.seccomp.defaultAction: unknown value \"SCMP_ACT_MAYBE\""},
        Hostile{"{" BASE R"(, "linux": {"seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": [], "action": "SCMP_ACT_ERRNO"}]}}})",
                "linux.seccomp.syscalls[0].names: needs at least one name"},
        Hostile{"{" BASE R"(, "linux": {"seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["x"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 6, "value": 0, "op": "SCMP_CMP_EQ"}]}]}}})",
                "linux.seccomp.syscalls[0].args[0].index: a system call has arguments 0 to 5"},
        Hostile{"{" BASE R"(, "linux": {"seccomp": {"defaultAction": "SCMP_ACT_NOTIFY"}}})",
                "linux.seccomp: SCMP_ACT_NOTIFY is used but listenerPath is not set"},
        Hostile{"{" BASE R"(, "linux": {"rootfsPropagation": "rsharedd"}})", "linux.rootfsPropagation: unknown value \"rsharedd\""},
        // 0o60666: a block device's type bits on a character device.
        Hostile{"{" BASE R"(, "linux": {"devices": [{"type": "c", "path": "/dev/x", "major": 1, "minor": 3, "fileMode": 25014}]}})",
                "linux.devices[0].fileMode: its file-type bits are not those of a device of type c"},
        Hostile{"{" BASE R"(, "linux": {"devices": [{"type": "c", "path": "/dev/x", "major": 1, "minor": 3, "fileMode": 1024}]}})",
                "linux.devices[0].fileMode: the permission bits must be at most 0777 (511)"},
        Hostile{"{" BASE R"(, "linux": {"personality": {"domain": "LINUX64"}}})", "linux.personality.domain: unknown value \"LINUX64\""}));
#undef BASE

Config supported_base() {
  auto r = parse_config(R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"]}, "linux": {}})");
  EXPECT_TRUE(r.has_value());
  return *r;
}

TEST(BundleConfigSupport, SelinuxLabelRefusedWithoutSelinux) {
  Config c = supported_base();
  c.process->selinux_label = "system_u:system_r:container_t:s0";
  auto s = check_supported(c, HostFacts{});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind(), ErrorKind::host_unsupported);
  EXPECT_EQ(s.error().what(), "process.selinuxLabel: SELinux is not enabled on this host");
  // Where SELinux is enabled the label is still refused: kern does not apply one yet, and a
  // label asked for must never be dropped silently.
  auto on = check_supported(c, HostFacts{.selinux = true});
  ASSERT_FALSE(on.has_value());
  EXPECT_EQ(on.error().what(), "process.selinuxLabel: applying an SELinux label is not implemented yet in kern");
}

TEST(BundleConfigSupport, IntelRdtRefused) {
  auto r = parse_config(R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"]},
    "linux": {"intelRdt": {"closID": "x"}}})");
  ASSERT_TRUE(r.has_value());
  auto s = check_supported(*r, HostFacts{.selinux = true, .apparmor = true});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().what(), "linux.intelRdt: Intel RDT (resctrl) is not supported by kern");
}

// The specification deprecates memory.kernel and kernelTCP (runtimes may ignore them):
// accepted here, warned about by plan_container.
TEST(BundleConfigSupport, DeprecatedKernelMemoryIsAccepted) {
  auto r = parse_config(
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"]}, "linux": {"resources": {"memory": {"kernel": 1, "kernelTCP": 2}}}})");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(check_supported(*r, HostFacts{}).has_value());
}

TEST(BundleConfigSupport, NotCarriedOutIsRefusedNotDropped) {
  const char* docs[] = {
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"], "scheduler": {"policy": "SCHED_FIFO"}}})",
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"], "apparmorProfile": "p"}})",
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"]}, "linux": {"timeOffsets": {}}})",
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"]}, "linux": {"mountLabel": "x"}})",
      R"({"ociVersion": "1.2.0", "process": {"cwd": "/", "args": ["a"]}})",
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}})",
      R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/"}})",
  };
  for (const char* d : docs) {
    auto r = parse_config(d);
    ASSERT_TRUE(r.has_value()) << d << ": " << r.error().what();
    EXPECT_FALSE(check_supported(*r, HostFacts{}).has_value()) << d;
  }
}

}  // namespace
}  // namespace kern::bundle
