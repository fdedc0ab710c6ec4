// The OCI root's step order for the config.json documents engines really send: podman 4.3's
// (root, `podman create` of a local image, read back through a runtime wrapper) and containerd
// 1.6's default (`ctr oci spec`), their mounts, maskedPaths and readonlyPaths as those tools
// wrote them (bind sources shortened). The order: the root made private and bound, every mount
// in document order, pivot_root, then readonlyPaths and maskedPaths inside the new root.
#include <gtest/gtest.h>

#include "runtime/bundle/config.h"
#include "runtime/bundle/mount_options.h"

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

}  // namespace
}  // namespace kern::bundle
