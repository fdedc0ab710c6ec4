// The OCI root's step order for the config.json documents engines really send: podman 4.3's
// (root, `podman create` of a local image, read back through a runtime wrapper) and containerd
// 1.6's default (`ctr oci spec`), their mounts, maskedPaths and readonlyPaths as those tools
// wrote them (bind sources shortened). The order: the root made private and bound, every mount
// in document order, pivot_root, then readonlyPaths and maskedPaths inside the new root.
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/bundle/config.h"
#include "runtime/bundle/mount_options.h"
#include "runtime/bundle/oci_root.h"

namespace kern::bundle {
namespace {

std::vector<std::string> steps_of(const char* doc) {
  auto c = parse_config(doc);
  EXPECT_TRUE(c.has_value()) << c.error().what();
  std::vector<std::string> got;
  if (c)
    for (const auto& s : plan_oci_mounts(*c)) got.push_back(std::string(oci_step_name(s.kind)) + " " + s.target);
  return got;
}

TEST(EngineMounts, PodmanRootDefault) {
  auto got = steps_of(R"({"ociVersion": "1.0.2-dev", "root": {"path": "/merged"},
    "mounts": [
      {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
      {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "noexec", "strictatime", "mode=755", "size=65536k"]},
      {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
      {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
      {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
      {"destination": "/etc/hostname", "type": "bind", "source": "/u/hostname", "options": ["bind", "rprivate"]},
      {"destination": "/etc/resolv.conf", "type": "bind", "source": "/u/resolv.conf", "options": ["bind", "rprivate"]},
      {"destination": "/etc/hosts", "type": "bind", "source": "/u/hosts", "options": ["bind", "rprivate"]},
      {"destination": "/dev/shm", "type": "bind", "source": "/u/shm", "options": ["bind", "rprivate", "nosuid", "noexec", "nodev"]},
      {"destination": "/run/.containerenv", "type": "bind", "source": "/u/.containerenv", "options": ["bind", "rprivate"]},
      {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["rprivate", "nosuid", "noexec", "nodev", "relatime", "ro"]}],
    "linux": {
      "maskedPaths": ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
                      "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/fs/selinux", "/sys/dev/block"],
      "readonlyPaths": ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]}})");
  EXPECT_EQ(got, (std::vector<std::string>{
                     "root-propagation /", "bind-root /", "mount /proc", "mount /dev", "mount /sys", "mount /dev/pts",
                     "mount /dev/mqueue", "mount /etc/hostname", "mount /etc/resolv.conf", "mount /etc/hosts",
                     "mount /dev/shm", "mount /run/.containerenv", "mount /sys/fs/cgroup", "pivot-root /",
                     "readonly /proc/asound", "readonly /proc/bus", "readonly /proc/fs", "readonly /proc/irq",
                     "readonly /proc/sys", "readonly /proc/sysrq-trigger", "mask /proc/acpi", "mask /proc/kcore",
                     "mask /proc/keys", "mask /proc/latency_stats", "mask /proc/timer_list", "mask /proc/timer_stats",
                     "mask /proc/sched_debug", "mask /proc/scsi", "mask /sys/firmware", "mask /sys/fs/selinux",
                     "mask /sys/dev/block"}));
}

TEST(EngineMounts, ContainerdDefault) {
  auto got = steps_of(R"({"ociVersion": "1.0.2-dev", "root": {"path": "rootfs"},
    "mounts": [
      {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
      {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
      {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
      {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
      {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
      {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
      {"destination": "/run", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]}],
    "linux": {
      "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
                      "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
      "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]}})");
  EXPECT_EQ(got, (std::vector<std::string>{
                     "root-propagation /", "bind-root /", "mount /proc", "mount /dev", "mount /dev/pts", "mount /dev/shm",
                     "mount /dev/mqueue", "mount /sys", "mount /run", "pivot-root /", "readonly /proc/bus",
                     "readonly /proc/fs", "readonly /proc/irq", "readonly /proc/sys", "readonly /proc/sysrq-trigger",
                     "mask /proc/acpi", "mask /proc/asound", "mask /proc/kcore", "mask /proc/keys",
                     "mask /proc/latency_stats", "mask /proc/timer_list", "mask /proc/timer_stats",
                     "mask /proc/sched_debug", "mask /sys/firmware", "mask /proc/scsi"}));
}

// The same containerd document as the child will build it (`kern oci plan` prints these lines):
// each mount with its flags and data, the default devices before pivot_root (nodes made as
// root, bound from the host in a user namespace of the container's own), the /dev links.
TEST(EngineMounts, ContainerdDefaultAsTheChildBuildsIt) {
  auto c = parse_config(R"({"ociVersion": "1.0.2-dev", "root": {"path": "rootfs"},
    "mounts": [
      {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
      {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
      {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
      {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
      {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
      {"destination": "/data", "type": "bind", "source": "vol", "options": ["rbind", "ro", "rslave"]}],
    "linux": {"maskedPaths": ["/proc/kcore"], "readonlyPaths": ["/proc/sys"], "sysctl": {"net.ipv4.ip_forward": "1"}}})");
  ASSERT_TRUE(c.has_value()) << c.error().what();
  std::vector<std::string> mounts = {
      "root-propagation / rprivate",
      "bind-root /b/rootfs",
      "/proc type=proc source=proc nosuid,nodev,noexec",
      "/dev type=tmpfs source=tmpfs nosuid,strictatime data=mode=755,size=65536k",
      "/dev/pts type=devpts source=devpts nosuid,noexec data=newinstance,ptmxmode=0666,mode=0620,gid=5",
      "/dev/shm type=tmpfs source=shm nosuid,nodev,noexec data=mode=1777,size=65536k",
      "/sys type=sysfs source=sysfs ro,nosuid,nodev,noexec",
      "/data type=rbind source=/b/vol ro rslave"};
  std::vector<std::string> tail = {
      "dev-links /dev/fd /dev/stdin /dev/stdout /dev/stderr (and /dev/ptmx -> pts/ptmx with a devpts)",
      "pivot-root /", "sysctl /proc/sys/net/ipv4/ip_forward=1", "readonly /proc/sys", "mask /proc/kcore"};
  auto want = [&](const char* made) {
    std::vector<std::string> w = mounts;
    for (const char* dev : {"/dev/null c 1:3", "/dev/zero c 1:5", "/dev/full c 1:7", "/dev/random c 1:8",
                            "/dev/urandom c 1:9", "/dev/tty c 5:0"})
      w.push_back(std::string("device ") + dev + made + " (default)");
    w.insert(w.end(), tail.begin(), tail.end());
    return w;
  };
  EXPECT_EQ(describe_oci_root(plan_oci_root(*c, "/b", "/b/rootfs", false, false)), want(" mode 0666 owner 0:0"));
  EXPECT_EQ(describe_oci_root(plan_oci_root(*c, "/b", "/b/rootfs", true, false)), want(" bound from the host"));
  auto chrooted = describe_oci_root(plan_oci_root(*c, "/b", "/b/rootfs", false, true));
  EXPECT_NE(std::find(chrooted.begin(), chrooted.end(), "chroot / (--no-pivot)"), chrooted.end());
}

}  // namespace
}  // namespace kern::bundle
