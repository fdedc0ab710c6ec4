// config.json -> an OCI container's launch plan, root and cgroup: the pure parts of create.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "runtime/cgroup/container.h"
#include "runtime/bundle/oci_plan.h"

namespace kern::bundle {
namespace {

LoadedBundle bundle_of(const std::string& doc) {
  auto c = parse_config(doc);
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().what());
  LoadedBundle b;
  b.dir = "/b";
  b.root_path = "/b/rootfs";
  b.config = c ? *c : Config{};
  return b;
}

const char* kBase = R"({"ociVersion": "1.2.0", "root": {"path": "rootfs"}, "hostname": "h",
  "process": {"cwd": "/w", "args": ["sh", "-c", "x"], "env": ["PATH=/opt/bin:/bin"],
              "user": {"uid": 5, "gid": 6, "additionalGids": [7, 8], "umask": 18},
              "noNewPrivileges": true,
              "capabilities": {"bounding": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL"],
                               "permitted": ["CAP_KILL"], "ambient": ["CAP_KILL"]},
              "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 100, "hard": 200}]},
  "mounts": [{"destination": "/data", "type": "bind", "source": "vol", "options": ["ro"]},
             {"destination": "/proc", "type": "proc", "source": "proc"}],
  "linux": {"namespaces": [{"type": "mount"}, {"type": "pid"}, {"type": "uts"}, {"type": "user"}, {"type": "network"}],
            "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
            "sysctl": {"net.ipv4.ip_forward": "1"}, "rootfsPropagation": "slave",
            "maskedPaths": ["/proc/kcore"], "readonlyPaths": ["/proc/sys"]}})";

TEST(OciPlan, ProcessCredentialsAsTheConfigSays) {
  LoadedBundle b = bundle_of(kBase);
  auto l = plan_container(b, "c1", CreateOptions{false, 2}, 1000, 1000);
  ASSERT_TRUE(l.has_value()) << l.error().what();
  const LaunchPlan& p = (*l)->plan;
  EXPECT_EQ(p.clone_flags, static_cast<unsigned long long>(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWUSER | CLONE_NEWNET));
  EXPECT_FALSE(p.die_with_parent);
  EXPECT_EQ(p.cgroup.policy, CgroupPolicy::none);
  EXPECT_EQ(p.hostname, "h");
  EXPECT_TRUE(p.loopback_up);
  const ExecPlan& e = p.exec;
  EXPECT_EQ(e.creds.uid, 5u);
  EXPECT_EQ(e.creds.gid, 6u);
  EXPECT_TRUE(e.creds.switch_ids);
  EXPECT_EQ(e.creds.groups, (std::vector<gid_t>{7, 8}));
  EXPECT_EQ(e.umask, 18);
  EXPECT_EQ(e.cwd, "/w");
  EXPECT_TRUE(e.script_shell.empty());
  EXPECT_EQ(e.candidates, (std::vector<std::string>{"/opt/bin/sh", "/bin/sh"}));
  EXPECT_FALSE(e.filter_required);  // a config without linux.seccomp loads none
  EXPECT_EQ(e.creds.caps.bounding, (1ull << CAP_KILL) | (1ull << CAP_CHOWN));
  EXPECT_EQ(e.creds.caps.effective, 1ull << CAP_KILL);
  // Not inheritable, so not ambient either (the kernel refuses it; runc and crun leave it out).
  EXPECT_EQ(e.creds.caps.inheritable, 0u);
  EXPECT_EQ(e.creds.caps.ambient, 0u);
  ASSERT_EQ(e.rlimits.size(), 1u);
  EXPECT_EQ(e.rlimits[0].resource, RLIMIT_NOFILE);
  EXPECT_EQ(e.rlimits[0].soft, 100u);
  EXPECT_TRUE(e.no_new_privs);
  EXPECT_EQ(e.pass_fds, (std::vector<std::pair<int, int>>{{3, 3}, {4, 4}}));
  // gid maps absent: the caller's own gid becomes 0.
  ASSERT_EQ(p.uid_map.size(), 1u);
  EXPECT_EQ(p.uid_map[0].outside, 1000u);
  ASSERT_EQ(p.gid_map.size(), 1u);
  EXPECT_EQ(p.gid_map[0].inside, 0u);
  EXPECT_EQ(p.gid_map[0].outside, 1000u);
  EXPECT_EQ(p.seccomp.filter, nullptr);
  EXPECT_EQ(p.mounts.config, &(*l)->root);
}

// The ambient set the kernel allows: only what is also permitted and inheritable; the
// inheritable set is never filled to make room (CVE-2022-29162), and what is left out is named.
// The first document is `runc spec --rootless`'s (runc 1.1.5: no inheritable set at all).
TEST(OciPlan, AmbientOnlyWhatIsPermittedAndInheritable) {
  auto exec_of = [](const char* caps, std::vector<std::string>& warnings) {
    std::string doc = std::string(R"({"ociVersion": "1.0.2-dev", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["sh"], "capabilities": )") +
                      caps + "}}";
    auto c = parse_config(doc);
    EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().what());
    auto e = oci_exec_plan(*c->process, warnings);
    EXPECT_TRUE(e.has_value());
    return e->creds.caps;
  };
  std::vector<std::string> w;
  CapSets runc = exec_of(R"({"bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "ambient": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]})", w);
  uint64_t three = (1ull << CAP_AUDIT_WRITE) | (1ull << CAP_KILL) | (1ull << CAP_NET_BIND_SERVICE);
  EXPECT_EQ(runc.permitted, three);
  EXPECT_EQ(runc.inheritable, 0u);
  EXPECT_EQ(runc.ambient, 0u);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("CAP_KILL,CAP_NET_BIND_SERVICE,CAP_AUDIT_WRITE not raised"), std::string::npos) << w[0];
  w.clear();
  CapSets some = exec_of(R"({"permitted": ["CAP_KILL", "CAP_CHOWN"], "inheritable": ["CAP_KILL", "CAP_SYS_CHROOT"],
      "ambient": ["CAP_KILL", "CAP_CHOWN", "CAP_SYS_CHROOT"]})", w);
  EXPECT_EQ(some.inheritable, (1ull << CAP_KILL) | (1ull << CAP_SYS_CHROOT));
  EXPECT_EQ(some.ambient, 1ull << CAP_KILL);
  ASSERT_EQ(w.size(), 1u);
  w.clear();
  CapSets all = exec_of(R"({"permitted": ["CAP_KILL"], "inheritable": ["CAP_KILL"], "ambient": ["CAP_KILL"]})", w);
  EXPECT_EQ(all.ambient, 1ull << CAP_KILL);
  EXPECT_TRUE(w.empty());
}

// process.apparmorProfile: accepted where AppArmor is enabled and entered at exec; refused where
// it is not; "unconfined" asks for nothing.
TEST(OciPlan, AppArmorProfileIsEnteredAtExec) {
  auto doc = [](const char* profile) {
    return std::string(R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"], "apparmorProfile": ")") +
           profile + R"("}})";
  };
  auto c = parse_config(doc("kern-test"));
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(check_supported(*c, HostFacts{.apparmor = true}).has_value());
  auto off = check_supported(*c, HostFacts{});
  ASSERT_FALSE(off.has_value());
  EXPECT_EQ(off.error().what(), "process.apparmorProfile: AppArmor is not enabled on this host");
  std::vector<std::string> warnings;
  auto e = oci_exec_plan(*c->process, warnings);
  ASSERT_TRUE(e.has_value()) << e.error().what();
  EXPECT_EQ(e->apparmor_exec, "exec kern-test");
  auto u = parse_config(doc("unconfined"));
  ASSERT_TRUE(u.has_value());
  EXPECT_TRUE(check_supported(*u, HostFacts{}).has_value());
  EXPECT_EQ(oci_exec_plan(*u->process, warnings)->apparmor_exec, "");
}

TEST(OciPlan, RootStepsDevicesAndSysctl) {
  LoadedBundle b = bundle_of(kBase);
  auto l = plan_container(b, "c1", CreateOptions{}, 1000, 1000);
  ASSERT_TRUE(l.has_value());
  const ConfigRoot& r = (*l)->root;
  EXPECT_EQ(r.root_path, "/b/rootfs");
  ASSERT_EQ(r.mounts.size(), 2u);
  EXPECT_EQ(r.mounts[0].source, "/b/vol");  // a relative bind source is the bundle's
  EXPECT_TRUE(r.mounts[0].options.bind);
  EXPECT_EQ(r.mounts[1].source, "proc");
  EXPECT_EQ(r.default_devices, 6u);
  EXPECT_TRUE(r.devices[0].bind_from_host);  // a user namespace cannot mknod
  ASSERT_EQ(r.sysctl.size(), 1u);
  EXPECT_EQ(r.sysctl[0].first, "/proc/sys/net/ipv4/ip_forward");
  EXPECT_EQ(r.root_propagation, static_cast<unsigned long>(MS_SLAVE | MS_REC));
  EXPECT_EQ(r.final_propagation, static_cast<unsigned long>(MS_SLAVE | MS_REC));
}

TEST(OciPlan, RefusesWhatItCannotPlan) {
  std::string no_mnt = kBase;
  no_mnt.replace(no_mnt.find(R"({"type": "mount"}, )"), 19, "");
  auto l = plan_container(bundle_of(no_mnt), "c", CreateOptions{}, 0, 0);
  ASSERT_FALSE(l.has_value());
  EXPECT_NE(l.error().message().find("mount namespace"), std::string::npos);
  std::string no_uts = kBase;
  no_uts.replace(no_uts.find(R"({"type": "uts"}, )"), 17, "");
  l = plan_container(bundle_of(no_uts), "c", CreateOptions{}, 0, 0);
  ASSERT_FALSE(l.has_value());
  EXPECT_NE(l.error().message().find("hostname"), std::string::npos);
  std::string idmap = kBase;
  idmap.replace(idmap.find(R"("options": ["ro"])"), 17, R"("options": ["ro", "idmap"])");
  EXPECT_FALSE(plan_container(bundle_of(idmap), "c", CreateOptions{}, 0, 0).has_value());
}

TEST(OciPlan, RootWithoutAUserNamespaceMakesNodes) {
  std::string doc = R"({"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"cwd": "/", "args": ["a"]},
    "linux": {"namespaces": [{"type": "mount"}],
              "devices": [{"type": "c", "path": "/dev/fuse", "major": 10, "minor": 229, "fileMode": 438}]}})";
  auto l = plan_container(bundle_of(doc), "c", CreateOptions{}, 0, 0);
  ASSERT_TRUE(l.has_value()) << l.error().what();
  const ConfigRoot& r = (*l)->root;
  ASSERT_EQ(r.devices.size(), 7u);
  EXPECT_FALSE(r.devices[6].bind_from_host);
  EXPECT_EQ(r.devices[6].major, 10u);
  EXPECT_EQ(r.devices[6].mode, 0666u);
  EXPECT_EQ((*l)->plan.clone_flags, static_cast<unsigned long long>(CLONE_NEWNS));
  EXPECT_FALSE((*l)->plan.explicit_id_maps);
  EXPECT_EQ(r.root_propagation, static_cast<unsigned long>(MS_PRIVATE | MS_REC));
  EXPECT_EQ(r.final_propagation, 0u);
  // uid 0 of an engine's user namespace (rootless podman) cannot mknod either: nodes are bound.
  CreateOptions in_engine_userns;
  in_engine_userns.initial_userns = false;
  auto e = plan_container(bundle_of(doc), "c", in_engine_userns, 0, 0);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE((*e)->root.devices[0].bind_from_host);
  EXPECT_TRUE((*e)->root.devices[6].bind_from_host);
}

TEST(OciCgroupPath, AbsoluteRelativeEmptyAndSystemd) {
  EXPECT_EQ(*cgroup_relative_path("/default/c1", "c1", "/user.slice", false, true), "/default/c1");
  EXPECT_EQ(*cgroup_relative_path("pod/c1", "c1", "/a/b", false, false), "/a/b/pod/c1");
  EXPECT_EQ(*cgroup_relative_path("", "c1", "/", false, true), "/kern-oci/c1");
  EXPECT_EQ(*cgroup_relative_path("", "c1", "/a", false, false), "/a/kern-oci-c1");
  EXPECT_EQ(*cgroup_relative_path("machine-libpod.slice:libpod:abc", "abc", "/", true, true),
            "/machine.slice/machine-libpod.slice/libpod-abc.scope");
  EXPECT_EQ(*cgroup_relative_path("user.slice:libpod:abc", "abc",
                                  "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope", true, false),
            "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-abc.scope");
  EXPECT_FALSE(cgroup_relative_path("nocolons", "c", "/", true, true).has_value());
  EXPECT_FALSE(cgroup_relative_path("a/b:p:n", "c", "/", true, true).has_value());
}

TEST(OciCgroupResources, TheSpecificationsCgroupV2Mapping) {
  Resources r;
  r.memory_limit = 100 << 20;
  r.memory_swap = 150 << 20;
  r.memory_reservation = -1;
  r.cpu_shares = 1024;
  r.cpu_quota = 50000;
  r.pids_limit = 0;
  r.io_weight = 500;
  r.io_read_bps.push_back({8, 0, 1000});
  r.hugepage_limits.emplace_back("2MB", 4096);
  r.unified["memory.high"] = "max";
  auto f = resource_files(r);
  auto find = [&](const std::string& k) {
    for (const auto& [file, v] : f)
      if (file == k) return v;
    return std::string("<none>");
  };
  EXPECT_EQ(find("memory.max"), std::to_string(100 << 20));
  EXPECT_EQ(find("memory.swap.max"), std::to_string(50 << 20));  // swap alone
  EXPECT_EQ(find("memory.low"), "max");
  EXPECT_EQ(find("cpu.weight"), "39");  // 1 + (1024-2)*9999/262142
  EXPECT_EQ(find("cpu.max"), "50000 100000");
  EXPECT_EQ(find("pids.max"), "max");
  EXPECT_EQ(find("io.weight"), "default 4950");  // 1 + (500-10)*9999/990
  EXPECT_EQ(find("io.max"), "8:0 rbps=1000");
  EXPECT_EQ(find("hugetlb.2MB.max"), "4096");
  EXPECT_EQ(find("memory.high"), "max");
  auto c = needed_controllers(f);
  EXPECT_EQ(c, (std::vector<std::string>{"memory", "cpu", "pids", "io", "hugetlb"}));
}

}  // namespace
}  // namespace kern::bundle
