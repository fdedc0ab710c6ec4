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
#include "runtime/box/mount_exec.h"
#include "tests/unit/recording_mount_ops.h"

namespace kern::bundle {
namespace {

const char* const kPodmanRoot = R"({"ociVersion": "1.0.2-dev", "root": {"path": "/merged"},
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
      "readonlyPaths": ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]}})";

const char* const kContainerdDefault = R"({"ociVersion": "1.0.2-dev", "root": {"path": "rootfs"},
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
      "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]}})";


std::vector<std::string> described(const OciRootPlan& p) { return describe_config_steps(p.steps, p.root); }

std::vector<std::string> steps_of(const char* doc) {
  auto c = parse_config(doc);
  EXPECT_TRUE(c.has_value()) << c.error().what();
  std::vector<std::string> got;
  if (c)
    for (const auto& s : plan_oci_mounts(*c)) got.push_back(step_kind_name(s.kind) + " " + s.target);
  return got;
}

TEST(EngineMounts, PodmanRootDefault) {
  auto got = steps_of(kPodmanRoot);
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
  auto got = steps_of(kContainerdDefault);
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
  EXPECT_EQ(described(plan_oci_root(*c, "/b", "/b/rootfs", false, false)), want(" mode 0666 owner 0:0"));
  EXPECT_EQ(described(plan_oci_root(*c, "/b", "/b/rootfs", true, false)), want(" bound from the host"));
  auto chrooted = described(plan_oci_root(*c, "/b", "/b/rootfs", false, true));
  EXPECT_NE(std::find(chrooted.begin(), chrooted.end(), "chroot / (--no-pivot)"), chrooted.end());
}

// The calls the one mount walker makes for a document, through the recording seam: every target
// opened beneath the root, every mount onto a descriptor. `files`: the sources and paths that
// are regular files (podman's bind sources, the /proc files maskedPaths names).
std::vector<std::string> walk(const char* doc, bool in_userns, const std::vector<std::string>& files) {
  auto c = parse_config(doc);
  EXPECT_TRUE(c.has_value()) << c.error().what();
  if (!c) return {};
  OciRootPlan p = plan_oci_root(*c, "/b", "/b/rootfs", in_userns, false);
  RecordingOps ops;
  ops.detailed = true;
  ops.regular_files = files;
  // A fresh /dev tmpfs has none of the default nodes.
  ops.absent = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};
  MountContext ctx{"", nullptr, nullptr, &p.root, 7, 8};
  MountFailure f;
  EXPECT_TRUE(execute_mount_plan(p.steps, ctx, ops, &f)) << f.what << " " << f.detail;
  // Every descriptor the walk was handed is closed by its end.
  std::vector<int> handed = ops.handed, closed = ops.closed;
  std::sort(handed.begin(), handed.end());
  std::sort(closed.begin(), closed.end());
  EXPECT_EQ(handed, closed);
  return ops.calls;
}

// One call per line of a golden text.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

const std::vector<std::string> kProcFiles = {"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
                                             "/proc/timer_stats", "/proc/sched_debug", "/proc/sysrq-trigger"};

// podman as root: nodes made (mknod) in the /dev tmpfs, bind sources that are files get file
// mount points, each bind's propagation set on the new mount (opened again), the cgroup mount
// as cgroup2; after pivot_root the readonly paths are clones made read-only and moved back, the
// masks bind the one checked /dev/null (files) or an empty tmpfs (directories).
TEST(EngineMountsWalk, PodmanRootDefault) {
  std::vector<std::string> files = kProcFiles;
  for (const char* f : {"/u/hostname", "/u/resolv.conf", "/u/hosts", "/u/.containerenv"}) files.push_back(f);
  EXPECT_EQ(walk(kPodmanRoot, false, files), lines(R"(
propagation / rec,private
bind_host_path /b/rootfs /b/rootfs rec
resolve_no_symlinks /b/rootfs /proc
resolve /b/rootfs /proc dir
mount_at proc fd101 source=proc nosuid,nodev,noexec
resolve /b/rootfs /dev dir
mount_at tmpfs fd102 source=tmpfs nosuid,noexec,strictatime data=mode=755,size=65536k
resolve_no_symlinks /b/rootfs /sys
resolve /b/rootfs /sys dir
mount_at sysfs fd104 source=sysfs ro,nosuid,nodev,noexec
resolve /b/rootfs /dev/pts dir
mount_at devpts fd105 source=devpts nosuid,noexec data=newinstance,ptmxmode=0666,mode=0620,gid=5
resolve /b/rootfs /dev/mqueue dir
mount_at mqueue fd106 source=mqueue nosuid,nodev,noexec
resolve /b/rootfs /etc/hostname file
bind_host /u/hostname fd107(/etc/hostname)
resolve /b/rootfs /etc/hostname
propagation fd108(/etc/hostname) rec,private
resolve /b/rootfs /etc/resolv.conf file
bind_host /u/resolv.conf fd109(/etc/resolv.conf)
resolve /b/rootfs /etc/resolv.conf
propagation fd110(/etc/resolv.conf) rec,private
resolve /b/rootfs /etc/hosts file
bind_host /u/hosts fd111(/etc/hosts)
resolve /b/rootfs /etc/hosts
propagation fd112(/etc/hosts) rec,private
resolve /b/rootfs /dev/shm dir
bind_host /u/shm fd113(/dev/shm)
resolve /b/rootfs /dev/shm
remount fd114(/dev/shm) nosuid,nodev,noexec bind
resolve /b/rootfs /dev/shm
propagation fd115(/dev/shm) rec,private
resolve /b/rootfs /run/.containerenv file
bind_host /u/.containerenv fd116(/run/.containerenv)
resolve /b/rootfs /run/.containerenv
propagation fd117(/run/.containerenv) rec,private
resolve /b/rootfs /sys/fs/cgroup dir
mount_at cgroup2 fd118 source=cgroup ro,nosuid,nodev,noexec,relatime
resolve /b/rootfs /sys/fs/cgroup
propagation fd119(/sys/fs/cgroup) rec,private
resolve /b/rootfs /dev/null: ENOENT
resolve /b/rootfs /dev dir
mknod fd120(/dev) null c 1:3 0666 0:0
resolve /b/rootfs /dev/zero: ENOENT
resolve /b/rootfs /dev dir
mknod fd121(/dev) zero c 1:5 0666 0:0
resolve /b/rootfs /dev/full: ENOENT
resolve /b/rootfs /dev dir
mknod fd122(/dev) full c 1:7 0666 0:0
resolve /b/rootfs /dev/random: ENOENT
resolve /b/rootfs /dev dir
mknod fd123(/dev) random c 1:8 0666 0:0
resolve /b/rootfs /dev/urandom: ENOENT
resolve /b/rootfs /dev dir
mknod fd124(/dev) urandom c 1:9 0666 0:0
resolve /b/rootfs /dev/tty: ENOENT
resolve /b/rootfs /dev dir
mknod fd125(/dev) tty c 5:0 0666 0:0
resolve /b/rootfs /dev
symlink fd -> /proc/self/fd
symlink stdin -> /proc/self/fd/0
symlink stdout -> /proc/self/fd/1
symlink stderr -> /proc/self/fd/2
resolve_no_symlinks /b/rootfs /dev/pts/ptmx
unlink fd126(/dev) ptmx
symlink ptmx -> pts/ptmx
pivot /b/rootfs
resolve / /proc/asound
clone_tree fd128(/proc/asound) rec
set_attr fd129 +ro,nosuid,nodev,noexec --
move_tree fd129 fd128(/proc/asound)
resolve / /proc/bus
clone_tree fd130(/proc/bus) rec
set_attr fd131 +ro,nosuid,nodev,noexec --
move_tree fd131 fd130(/proc/bus)
resolve / /proc/fs
clone_tree fd132(/proc/fs) rec
set_attr fd133 +ro,nosuid,nodev,noexec --
move_tree fd133 fd132(/proc/fs)
resolve / /proc/irq
clone_tree fd134(/proc/irq) rec
set_attr fd135 +ro,nosuid,nodev,noexec --
move_tree fd135 fd134(/proc/irq)
resolve / /proc/sys
clone_tree fd136(/proc/sys) rec
set_attr fd137 +ro,nosuid,nodev,noexec --
move_tree fd137 fd136(/proc/sys)
resolve / /proc/sysrq-trigger
clone_tree fd138(/proc/sysrq-trigger) rec
set_attr fd139 +ro,nosuid,nodev,noexec --
move_tree fd139 fd138(/proc/sysrq-trigger)
resolve / /proc/acpi
empty_tmpfs fd140(/proc/acpi)
resolve / /proc/kcore
resolve_no_symlinks / /dev/null
char_device fd142 1:3
clone_tree fd142(/dev/null)
move_tree fd143 fd141(/proc/kcore)
resolve / /proc/keys
clone_tree fd142(/dev/null)
move_tree fd145 fd144(/proc/keys)
resolve / /proc/latency_stats
clone_tree fd142(/dev/null)
move_tree fd147 fd146(/proc/latency_stats)
resolve / /proc/timer_list
clone_tree fd142(/dev/null)
move_tree fd149 fd148(/proc/timer_list)
resolve / /proc/timer_stats
clone_tree fd142(/dev/null)
move_tree fd151 fd150(/proc/timer_stats)
resolve / /proc/sched_debug
clone_tree fd142(/dev/null)
move_tree fd153 fd152(/proc/sched_debug)
resolve / /proc/scsi
empty_tmpfs fd154(/proc/scsi)
resolve / /sys/firmware
empty_tmpfs fd155(/sys/firmware)
resolve / /sys/fs/selinux
empty_tmpfs fd156(/sys/fs/selinux)
resolve / /sys/dev/block
empty_tmpfs fd157(/sys/dev/block)
)"));
}

// containerd's default in a user namespace of the container's own: the default nodes are the
// host's, bound onto files made for them.
TEST(EngineMountsWalk, ContainerdDefault) {
  EXPECT_EQ(walk(kContainerdDefault, true, kProcFiles), lines(R"(
propagation / rec,private
bind_host_path /b/rootfs /b/rootfs rec
resolve_no_symlinks /b/rootfs /proc
resolve /b/rootfs /proc dir
mount_at proc fd101 source=proc nosuid,nodev,noexec
resolve /b/rootfs /dev dir
mount_at tmpfs fd102 source=tmpfs nosuid,strictatime data=mode=755,size=65536k
resolve /b/rootfs /dev/pts dir
mount_at devpts fd103 source=devpts nosuid,noexec data=newinstance,ptmxmode=0666,mode=0620,gid=5
resolve /b/rootfs /dev/shm dir
mount_at tmpfs fd104 source=shm nosuid,nodev,noexec data=mode=1777,size=65536k
resolve /b/rootfs /dev/mqueue dir
mount_at mqueue fd105 source=mqueue nosuid,nodev,noexec
resolve_no_symlinks /b/rootfs /sys
resolve /b/rootfs /sys dir
mount_at sysfs fd107 source=sysfs ro,nosuid,nodev,noexec
resolve /b/rootfs /run dir
mount_at tmpfs fd108 source=tmpfs nosuid,strictatime data=mode=755,size=65536k
resolve /b/rootfs /dev/null: ENOENT
resolve /b/rootfs /dev/null file
bind_host /dev/null fd109(/dev/null)
resolve /b/rootfs /dev/zero: ENOENT
resolve /b/rootfs /dev/zero file
bind_host /dev/zero fd110(/dev/zero)
resolve /b/rootfs /dev/full: ENOENT
resolve /b/rootfs /dev/full file
bind_host /dev/full fd111(/dev/full)
resolve /b/rootfs /dev/random: ENOENT
resolve /b/rootfs /dev/random file
bind_host /dev/random fd112(/dev/random)
resolve /b/rootfs /dev/urandom: ENOENT
resolve /b/rootfs /dev/urandom file
bind_host /dev/urandom fd113(/dev/urandom)
resolve /b/rootfs /dev/tty: ENOENT
resolve /b/rootfs /dev/tty file
bind_host /dev/tty fd114(/dev/tty)
resolve /b/rootfs /dev
symlink fd -> /proc/self/fd
symlink stdin -> /proc/self/fd/0
symlink stdout -> /proc/self/fd/1
symlink stderr -> /proc/self/fd/2
resolve_no_symlinks /b/rootfs /dev/pts/ptmx
unlink fd115(/dev) ptmx
symlink ptmx -> pts/ptmx
pivot /b/rootfs
resolve / /proc/bus
clone_tree fd117(/proc/bus) rec
set_attr fd118 +ro,nosuid,nodev,noexec --
move_tree fd118 fd117(/proc/bus)
resolve / /proc/fs
clone_tree fd119(/proc/fs) rec
set_attr fd120 +ro,nosuid,nodev,noexec --
move_tree fd120 fd119(/proc/fs)
resolve / /proc/irq
clone_tree fd121(/proc/irq) rec
set_attr fd122 +ro,nosuid,nodev,noexec --
move_tree fd122 fd121(/proc/irq)
resolve / /proc/sys
clone_tree fd123(/proc/sys) rec
set_attr fd124 +ro,nosuid,nodev,noexec --
move_tree fd124 fd123(/proc/sys)
resolve / /proc/sysrq-trigger
clone_tree fd125(/proc/sysrq-trigger) rec
set_attr fd126 +ro,nosuid,nodev,noexec --
move_tree fd126 fd125(/proc/sysrq-trigger)
resolve / /proc/acpi
empty_tmpfs fd127(/proc/acpi)
resolve / /proc/asound
empty_tmpfs fd128(/proc/asound)
resolve / /proc/kcore
resolve_no_symlinks / /dev/null
char_device fd130 1:3
clone_tree fd130(/dev/null)
move_tree fd131 fd129(/proc/kcore)
resolve / /proc/keys
clone_tree fd130(/dev/null)
move_tree fd133 fd132(/proc/keys)
resolve / /proc/latency_stats
clone_tree fd130(/dev/null)
move_tree fd135 fd134(/proc/latency_stats)
resolve / /proc/timer_list
clone_tree fd130(/dev/null)
move_tree fd137 fd136(/proc/timer_list)
resolve / /proc/timer_stats
clone_tree fd130(/dev/null)
move_tree fd139 fd138(/proc/timer_stats)
resolve / /proc/sched_debug
clone_tree fd130(/dev/null)
move_tree fd141 fd140(/proc/sched_debug)
resolve / /sys/firmware
empty_tmpfs fd142(/sys/firmware)
resolve / /proc/scsi
empty_tmpfs fd143(/proc/scsi)
)"));
}

}  // namespace
}  // namespace kern::bundle
