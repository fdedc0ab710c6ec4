// The mount plan's exact order, and its execution through a recording fake of MountOps.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/box/mount_exec.h"
#include "runtime/mount_plan.h"
#include "tests/unit/recording_mount_ops.h"

namespace kern {
namespace {

BoxSpec base_spec() {
  BoxSpec s;
  s.name = "t";
  s.lower_dirs = {"/layers/a", "/layers/b"};
  return s;
}

std::vector<std::string> kinds(const std::vector<MountStep>& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan) out.push_back(step_kind_name(s.kind) + " " + s.target);
  return out;
}

TEST(MountPlan, DefaultOrderPrivateFirstPivotLast) {
  auto plan = build_mount_plan(base_spec());
  auto k = kinds(plan);
  ASSERT_GE(k.size(), 10u);
  EXPECT_EQ(k[0], "make-private /");
  EXPECT_EQ(k[1], "scratch-tmpfs scratch");
  EXPECT_EQ(k[2], "overlay-root root");
  EXPECT_EQ(plan[2].source, "/layers/a:/layers/b");
  EXPECT_EQ(k[3], "proc /proc");
  EXPECT_EQ(k.back(), "pivot-root /");
  // /proc/sys is made read-only after /proc is mounted and before pivot_root.
  auto pos = [&](const std::string& s) { return std::find(k.begin(), k.end(), s) - k.begin(); };
  EXPECT_LT(pos("proc /proc"), pos("readonly-rebind /proc/sys"));
  EXPECT_LT(pos("dev-tmpfs /dev"), pos("dev-node /dev/null"));
  EXPECT_LT(pos("dev-tmpfs /dev"), pos("devpts /dev/pts"));
  EXPECT_NE(pos("tmpfs /tmp"), static_cast<long>(k.size()));
  EXPECT_NE(pos("sysfs-ro /sys"), static_cast<long>(k.size()));
  EXPECT_EQ(pos("remount-root-ro /"), static_cast<long>(k.size()));  // not read-only by default
}

TEST(MountPlan, EverySensitiveProcEntryIsMasked) {
  auto k = kinds(build_mount_plan(base_spec()));
  for (const auto& f : masked_proc_files())
    EXPECT_NE(std::find(k.begin(), k.end(), "mask-file " + f), k.end()) << f;
  for (const auto& d : masked_proc_dirs())
    EXPECT_NE(std::find(k.begin(), k.end(), "mask-dir " + d), k.end()) << d;
}

TEST(MountPlan, ReadOnlyRootIsRemountedLastBeforePivot) {
  BoxSpec s = base_spec();
  s.read_only = true;
  s.binds.push_back({"/host/data", "/data", true});
  auto k = kinds(build_mount_plan(s));
  ASSERT_GE(k.size(), 2u);
  EXPECT_EQ(k[k.size() - 2], "remount-root-ro /");
  EXPECT_EQ(k[k.size() - 3], "bind /data");
}

TEST(MountPlan, HostNetworkHasNoSysfs) {
  BoxSpec s = base_spec();
  s.net = NetMode::host;
  auto k = kinds(build_mount_plan(s));
  EXPECT_EQ(std::find(k.begin(), k.end(), "sysfs-ro /sys"), k.end());
}

TEST(MountPlan, HostNetworkGetsTheHostsNameServiceFilesNoneKeepsTheImages) {
  // --net none (and a spec kern's command line did not fill, such as an OCI bundle's): nothing.
  for (NetMode m : {NetMode::none, NetMode::host}) {
    BoxSpec s = base_spec();
    s.net = m;
    for (const auto& st : build_mount_plan(s)) EXPECT_NE(st.kind, MountStepKind::bind_file);
  }
  BoxSpec s = base_spec();
  s.net = NetMode::host;
  s.hostname = "web";
  s.host_name_files = BoxSpec::HostNameFiles{"127.0.0.1 localhost\n10.1.1.1 db", "nameserver 127.0.0.53\n"};
  std::vector<std::string> got;
  for (const auto& st : build_mount_plan(s))
    if (st.kind == MountStepKind::bind_file) got.push_back(st.target + "=" + st.content);
  EXPECT_EQ(got, (std::vector<std::string>{"/etc/hostname=web\n",
                                           "/etc/hosts=127.0.0.1 localhost\n10.1.1.1 db\n127.0.1.1\tweb\n",
                                           "/etc/resolv.conf=nameserver 127.0.0.53\n"}));
  s.host_name_files->resolv_conf.clear();  // the host has none: the image's stays
  int n = 0;
  for (const auto& st : build_mount_plan(s)) n += st.kind == MountStepKind::bind_file;
  EXPECT_EQ(n, 2);
}

TEST(MountPlan, APrivateNetworkGetsItsNameServiceFiles) {
  BoxSpec s = base_spec();
  s.net = NetMode::private_net;
  s.hostname = "web";
  s.read_only = true;
  s.private_net.nameservers = {"192.0.2.53"};
  s.private_net.hosts = {{"db.internal", "10.0.0.5"}};
  s.binds.push_back({"/host/resolv", "/etc/resolv.conf", true});
  auto plan = build_mount_plan(s);
  auto k = kinds(plan);
  auto pos = [&](const std::string& x) { return std::find(k.begin(), k.end(), x) - k.begin(); };
  // Its own /sys (the namespace is the box's), the files written after the overlay, before the
  // caller's -v (which wins) and before the root turns read-only.
  EXPECT_NE(pos("sysfs-ro /sys"), static_cast<long>(k.size()));
  for (const char* f : {"bind-file /etc/hostname", "bind-file /etc/hosts", "bind-file /etc/resolv.conf"}) {
    ASSERT_NE(pos(f), static_cast<long>(k.size())) << f;
    EXPECT_GT(pos(f), pos("overlay-root root")) << f;
    EXPECT_LT(pos(f), pos("bind /etc/resolv.conf")) << f;
    EXPECT_LT(pos(f), pos("remount-root-ro /")) << f;
  }
  const MountStep& hosts = plan[static_cast<size_t>(pos("bind-file /etc/hosts"))];
  EXPECT_NE(hosts.content.find("127.0.1.1\tweb\n"), std::string::npos);
  EXPECT_NE(hosts.content.find("10.0.0.5\tdb.internal\n"), std::string::npos);
  EXPECT_EQ(plan[static_cast<size_t>(pos("bind-file /etc/hostname"))].content, "web\n");
  EXPECT_NE(plan[static_cast<size_t>(pos("bind-file /etc/resolv.conf"))].content.find("nameserver 192.0.2.53\n"),
            std::string::npos);
  EXPECT_EQ(hosts.mode, 0644u);
  EXPECT_TRUE(hosts.read_only);  // --read-only: the bound files too
  EXPECT_EQ(describe_step(hosts), "bind-file /etc/hosts (" + std::to_string(hosts.content.size()) +
                                      " bytes) ro (--net private)");
}

TEST(MountPlan, OwnTmpReplacesTheDefaultTmp) {
  BoxSpec s = base_spec();
  s.tmpfs.push_back({"/tmp", 1 << 20, "--tmpfs"});
  auto plan = build_mount_plan(s);
  int tmps = 0;
  for (const auto& st : plan)
    if (st.kind == MountStepKind::tmpfs && st.target == "/tmp") {
      ++tmps;
      EXPECT_EQ(st.size, 1u << 20);
    }
  EXPECT_EQ(tmps, 1);
}

// A named volume is a bind step that says so: its origin names the volume, and an empty one
// asks for the copy-up (a bind never does).
TEST(MountPlan, AVolumeIsABindThatMayCopyUp) {
  BoxSpec s = base_spec();
  BindMount v;
  v.source = "/home/u/.cache/kern/volumes/data/_data";
  v.dest = "/var/lib/data";
  v.volume = "data";
  v.copy_up = true;
  s.binds.push_back(v);
  s.binds.push_back({"/host/dir", "/dir", false});
  auto plan = build_mount_plan(s);
  std::vector<const MountStep*> binds;
  for (const auto& st : plan)
    if (st.kind == MountStepKind::bind) binds.push_back(&st);
  ASSERT_EQ(binds.size(), 2u);
  EXPECT_EQ(binds[0]->target, "/var/lib/data");
  EXPECT_TRUE(binds[0]->copy_up);
  EXPECT_EQ(binds[0]->origin, "volume data");
  EXPECT_NE(describe_step(*binds[0]).find(" copy-up (volume data)"), std::string::npos) << describe_step(*binds[0]);
  EXPECT_FALSE(binds[1]->copy_up);
  EXPECT_EQ(binds[1]->origin, "-v");
  EXPECT_EQ(describe_step(*binds[1]).find("copy-up"), std::string::npos);
}

TEST(MountExec, WalksThePlanInOrderThroughTheSeam) {
  BoxSpec s = base_spec();
  auto plan = build_mount_plan(s);
  std::vector<int> none;
  MountContext ctx{"/run/kern/boxes/t", &none, &none};
  RecordingOps ops;
  ops.missing = {"/proc/sched_debug"};
  MountFailure f;
  ASSERT_TRUE(execute_mount_plan(plan, ctx, ops, &f));
  ASSERT_GE(ops.calls.size(), 6u);
  EXPECT_EQ(ops.calls[0], "mount_host none /");
  EXPECT_EQ(ops.calls[1], "mount_host tmpfs /run/kern/boxes/t");
  EXPECT_EQ(ops.calls[2], "mkdir /run/kern/boxes/t/upper");
  EXPECT_EQ(ops.calls[5], "open_dir /layers/a");
  EXPECT_EQ(ops.calls[6], "open_dir /layers/b");
  EXPECT_EQ(ops.calls[7], "open_dir /run/kern/boxes/t/upper");
  EXPECT_EQ(ops.calls[8], "open_dir /run/kern/boxes/t/work");
  EXPECT_EQ(ops.calls[9], "mount_host overlay /run/kern/boxes/t/root userxattr");
  EXPECT_EQ(ops.calls[10], "resolve /run/kern/boxes/t/root /proc dir");
  EXPECT_EQ(ops.calls[11], "mount_at proc fd100");
  EXPECT_EQ(ops.calls.back(), "pivot /run/kern/boxes/t/root");
  // A masked entry the kernel does not have is skipped, not an error.
  EXPECT_NE(std::find(ops.calls.begin(), ops.calls.end(), "resolve /proc/sched_debug ENOENT"), ops.calls.end());
}

// Files are masked from one descriptor of /dev/null, checked to be the null device before the
// first bind (runc's CVE-2025-31133 class): never the path again, and nothing bound from
// something else.
bool walk_base_plan(RecordingOps& ops, MountFailure* f) {
  static const std::vector<int> kNone;
  static const MountContext kCtx{"/x", &kNone, &kNone};
  static const auto kPlan = build_mount_plan(base_spec());  // outlives f->step
  return execute_mount_plan(kPlan, kCtx, ops, f);
}

TEST(MountExec, FileMasksBindOneCheckedNullDevice) {
  RecordingOps ops;
  MountFailure f;
  ASSERT_TRUE(walk_base_plan(ops, &f));
  auto at = std::find(ops.calls.begin(), ops.calls.end(), "open_host /dev/null");
  ASSERT_NE(at, ops.calls.end());
  ASSERT_NE(at + 1, ops.calls.end());
  EXPECT_EQ((at + 1)->rfind("char_device fd", 0), 0u) << *(at + 1);
  EXPECT_NE((at + 1)->find(" 1:3"), std::string::npos) << *(at + 1);
  std::string null_fd = (at + 1)->substr(std::string("char_device ").size(), (at + 1)->find(' ', 12) - 12);
  EXPECT_EQ(std::count(ops.calls.begin(), ops.calls.end(), "open_host /dev/null"), 1);
  size_t binds = 0;
  for (const auto& c : ops.calls)
    if (c.rfind("bind " + null_fd + " ", 0) == 0) ++binds;
  EXPECT_EQ(binds, masked_proc_files().size());  // every mask from that descriptor

  RecordingOps other;
  other.not_null_device = ENODEV;
  ASSERT_FALSE(walk_base_plan(other, &f));
  EXPECT_EQ(f.err, ENODEV);
  ASSERT_NE(f.step, nullptr);
  EXPECT_EQ(f.step->kind, MountStepKind::mask_file);
}

TEST(MountExec, AFailingStepStopsTheWalkAndNamesItself) {
  BoxSpec s = base_spec();
  auto plan = build_mount_plan(s);
  std::vector<int> none;
  MountContext ctx{"/x", &none, &none};
  RecordingOps ops;
  ops.fail_mount_of = 0;  // the proc mount
  MountFailure f;
  ASSERT_FALSE(execute_mount_plan(plan, ctx, ops, &f));
  EXPECT_EQ(f.err, EPERM);
  ASSERT_NE(f.step, nullptr);
  EXPECT_EQ(f.step->kind, MountStepKind::proc);
  EXPECT_STREQ(f.what, "mount");
  EXPECT_NE(ops.calls.back().find("mount_at proc"), std::string::npos);  // nothing after it
}

// The overlay's options show in the box's /proc/self/mountinfo: its layers are named by fds
// opened for the mount, never by the host paths of the image store or the scratch dir.
TEST(MountExec, TheOverlayNamesItsLayersByFdNotByHostPath) {
  BoxSpec s = base_spec();
  s.lower_dirs = {"/home/u/.cache/kern/trees/aa", "/home/u/.cache/kern/trees/bb"};
  auto plan = build_mount_plan(s);
  std::vector<int> none;
  MountContext ctx{"/run/user/1000/kern/scratch", &none, &none};
  RecordingOps ops;
  MountFailure f;
  ASSERT_TRUE(execute_mount_plan(plan, ctx, ops, &f));
  EXPECT_EQ(ops.overlay_data,
            "lowerdir=/proc/self/fd/500:/proc/self/fd/501,upperdir=/proc/self/fd/502,workdir=/proc/self/fd/503,userxattr");
  EXPECT_EQ(ops.overlay_data.find("/home/u"), std::string::npos);
  EXPECT_EQ(ops.overlay_data.find("/run/user"), std::string::npos);
}

// Every directory the plan masks is masked; the first with a new read-only tmpfs, the others
// with binds of that one mount (read-only, nosuid, nodev, noexec go with it), and a mask whose
// target the kernel lacks is left out without ending the sharing.
TEST(MountExec, DirectoryMasksShareTheFirstMasksTmpfs) {
  BoxSpec s = base_spec();
  auto plan = build_mount_plan(s);
  std::vector<std::string> dirs;
  for (const auto& st : plan)
    if (st.kind == MountStepKind::mask_dir) dirs.push_back(st.target);
  ASSERT_GE(dirs.size(), 3u);
  std::vector<int> none;
  MountContext ctx{"/x", &none, &none};
  RecordingOps ops;
  ops.missing = {dirs[0]};
  MountFailure f;
  ASSERT_TRUE(execute_mount_plan(plan, ctx, ops, &f));
  auto at = [&](const std::string& call) {
    return std::find(ops.calls.begin(), ops.calls.end(), call) - ops.calls.begin();
  };
  EXPECT_LT(at("resolve " + dirs[0] + " ENOENT"), static_cast<std::ptrdiff_t>(ops.calls.size()));
  // dirs[1]: resolved, a tmpfs mounted on it, resolved again (the tmpfs's root), kept.
  auto first = at("resolve /x/root " + dirs[1]);
  ASSERT_LT(first + 2, static_cast<std::ptrdiff_t>(ops.calls.size()));
  std::string target_fd = ops.calls[first + 1].substr(ops.calls[first + 1].rfind(" fd") + 1);
  EXPECT_EQ(ops.calls[first + 1], "mount_at tmpfs " + target_fd);
  EXPECT_EQ(ops.calls[first + 2], "resolve /x/root " + dirs[1]);
  int tree = std::stoi(target_fd.substr(2)) + 1;
  for (size_t i = 2; i < dirs.size(); ++i) {
    auto r = at("resolve /x/root " + dirs[i]);
    ASSERT_LT(r + 1, static_cast<std::ptrdiff_t>(ops.calls.size())) << dirs[i];
    EXPECT_EQ(ops.calls[r + 1].rfind("bind fd" + std::to_string(tree) + " fd", 0), 0u) << ops.calls[r + 1];
    EXPECT_EQ(ops.calls[r + 1].find(" ro"), std::string::npos);  // read-only already: the clone's flags
  }
  int tmpfs_mounts = 0, other_tmpfs = 0;
  for (const auto& c : ops.calls) tmpfs_mounts += c.rfind("mount_at tmpfs", 0) == 0;
  for (const auto& st : plan) other_tmpfs += st.kind == MountStepKind::dev_tmpfs || st.kind == MountStepKind::tmpfs;
  EXPECT_EQ(tmpfs_mounts, 1 + other_tmpfs);  // one for all the masks
  EXPECT_EQ(std::count(ops.closed.begin(), ops.closed.end(), tree), 1);  // closed once, at the end
}

struct Skips {
  std::vector<std::string> steps;
  std::vector<int> errs;
};
void record_skip(void* cookie, const MountStep& step, int err) {
  auto* s = static_cast<Skips*>(cookie);
  s->steps.push_back(step_kind_name(step.kind) + " " + step.target);
  s->errs.push_back(err);
}

// A read-only /sys the host refuses is a step skipped and said so, never a silent success; with
// nobody to tell, it is a failure.
TEST(MountExec, ARefusedSysfsIsReportedSkippedNotDone) {
  BoxSpec s = base_spec();
  auto plan = build_mount_plan(s);
  std::vector<int> none;
  MountContext ctx{"/x", &none, &none};
  for (int err : {EPERM, EACCES}) {
    RecordingOps ops;
    ops.fail_fstype = "sysfs";
    ops.fail_fstype_errno = err;
    Skips skips;
    MountFailure f;
    ASSERT_TRUE(execute_mount_plan(plan, ctx, ops, &f, record_skip, &skips));
    ASSERT_EQ(skips.steps.size(), 1u);
    EXPECT_EQ(skips.steps[0], "sysfs-ro /sys");
    EXPECT_EQ(skips.errs[0], err);
    RecordingOps silent;
    silent.fail_fstype = "sysfs";
    silent.fail_fstype_errno = err;
    MountFailure g;
    ASSERT_FALSE(execute_mount_plan(plan, ctx, silent, &g));
    EXPECT_EQ(g.err, err);
  }
  // Any other answer stays a failure.
  RecordingOps other;
  other.fail_fstype = "sysfs";
  other.fail_fstype_errno = EINVAL;
  Skips skips;
  MountFailure f;
  EXPECT_FALSE(execute_mount_plan(plan, ctx, other, &f, record_skip, &skips));
  EXPECT_TRUE(skips.steps.empty());
}

// The plan of a --net private box named web, walked with a scratch dir of "/x".
struct PrivateNetWalk {
  std::vector<MountStep> plan;
  std::vector<int> none;
  MountContext ctx{"/x", &none, &none};
  PrivateNetWalk() {
    BoxSpec s = base_spec();
    s.net = NetMode::private_net;
    s.hostname = "web";
    plan = build_mount_plan(s);
  }
};

TEST(MountExec, ANameServiceFileIsWrittenOnScratchAndBoundOverTheTarget) {
  PrivateNetWalk w;
  RecordingOps ops;
  MountFailure f;
  ASSERT_TRUE(execute_mount_plan(w.plan, w.ctx, ops, &f));
  // Nothing is written into the root (an /etc the box cannot write, owned by root, stays as
  // it is): the file goes on the scratch tmpfs and is bound over /etc/hostname.
  auto at = std::find(ops.calls.begin(), ops.calls.end(), "write /x /files/etc/hostname 4 bytes mode 420");
  ASSERT_NE(at, ops.calls.end());
  ASSERT_LT(at + 2, ops.calls.end());
  EXPECT_EQ(at[1].rfind("resolve /x/root /etc/hostname file", 0), 0u) << at[1];
  EXPECT_EQ(at[2].rfind("bind /x/files/etc/hostname fd", 0), 0u) << at[2];
  for (const auto& c : ops.calls) EXPECT_EQ(c.rfind("write /x/root", 0), std::string::npos) << c;
}

TEST(MountExec, ANameServiceFileWhoseMountPointCannotBeMadeIsSkippedAndSaid) {
  PrivateNetWalk w;
  RecordingOps ops;
  ops.refused = {"/etc/hostname"};  // missing, in an /etc of an unmapped owner: EACCES
  Skips skips;
  MountFailure f;
  ASSERT_TRUE(execute_mount_plan(w.plan, w.ctx, ops, &f, record_skip, &skips));
  ASSERT_EQ(skips.steps.size(), 1u);
  EXPECT_EQ(skips.steps[0], "bind-file /etc/hostname");
  EXPECT_EQ(skips.errs[0], EACCES);
  // Without anyone to tell, it fails rather than go unsaid.
  RecordingOps quiet;
  quiet.refused = {"/etc/hostname"};
  EXPECT_FALSE(execute_mount_plan(w.plan, w.ctx, quiet, &f));
}

// A pod's /etc/hosts (--pod, --network NAME) in a tree whose /etc the box cannot make it in: the
// box goes on without it and says so; the same refusal of a -v bind fails the start (control).
TEST(MountExec, APodsNameFileWhoseTargetCannotBeMadeIsSkippedAndSaid) {
  for (bool pod : {true, false}) {
    BoxSpec s = base_spec();
    BindMount b;
    b.source = "/run/kern/pods/web/hosts";
    b.dest = "/etc/hosts";
    b.read_only = true;
    b.origin = pod ? "--pod web" : "-v";
    b.skip_unreachable = pod;
    s.binds.push_back(b);
    auto plan = build_mount_plan(s);
    int fd = ::open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);  // a regular file to fstat
    ASSERT_GE(fd, 0);
    std::vector<int> fds{fd}, none;
    MountContext ctx{"/x", &fds, &none};
    RecordingOps ops;
    ops.refused = {"/etc/hosts"};
    Skips skips;
    MountFailure f;
    bool ok = execute_mount_plan(plan, ctx, ops, &f, record_skip, &skips);
    ::close(fd);
    if (pod) {
      ASSERT_TRUE(ok);
      ASSERT_EQ(skips.steps.size(), 1u);
      EXPECT_EQ(skips.steps[0], "bind /etc/hosts");
      EXPECT_EQ(skips.errs[0], EACCES);
    } else {
      EXPECT_FALSE(ok);
      EXPECT_TRUE(skips.steps.empty());
    }
  }
}

// The default kern box, every call of the walk through the seam, in order: scratch tmpfs and
// overlay by fd, proc, the file masks from one checked /dev/null, the directory masks sharing the
// first one's tmpfs, /proc/sys read-only, /dev and its nodes, devpts, links, shm, sysfs, /tmp,
// pivot_root.
TEST(MountExec, DefaultKernBoxGolden) {
  const std::string kGolden = R"(
mount_host none /
mount_host tmpfs /run/kern/boxes/t
mkdir /run/kern/boxes/t/upper
mkdir /run/kern/boxes/t/work
mkdir /run/kern/boxes/t/root
open_dir /layers/a
open_dir /layers/b
open_dir /run/kern/boxes/t/upper
open_dir /run/kern/boxes/t/work
mount_host overlay /run/kern/boxes/t/root userxattr
resolve /run/kern/boxes/t/root /proc dir
mount_at proc fd100
open_host /dev/null
char_device fd101 1:3
resolve /run/kern/boxes/t/root /proc/kcore
bind fd101 fd102
resolve /run/kern/boxes/t/root /proc/keys
bind fd101 fd103
resolve /run/kern/boxes/t/root /proc/timer_list
bind fd101 fd104
resolve /run/kern/boxes/t/root /proc/sched_debug
bind fd101 fd105
resolve /run/kern/boxes/t/root /proc/latency_stats
bind fd101 fd106
resolve /run/kern/boxes/t/root /proc/kallsyms
bind fd101 fd107
resolve /run/kern/boxes/t/root /proc/kmsg
bind fd101 fd108
resolve /run/kern/boxes/t/root /proc/sysrq-trigger
bind fd101 fd109
resolve /run/kern/boxes/t/root /proc/acpi
mount_at tmpfs fd110
resolve /run/kern/boxes/t/root /proc/acpi
resolve /run/kern/boxes/t/root /proc/scsi
bind fd111 fd112
resolve /run/kern/boxes/t/root /proc/firmware
bind fd111 fd113
resolve /run/kern/boxes/t/root /proc/bus
bind fd111 fd114
resolve /run/kern/boxes/t/root /proc/fs
bind fd111 fd115
resolve /run/kern/boxes/t/root /proc/irq
bind fd111 fd116
resolve /run/kern/boxes/t/root /proc/sys
bind fd117 fd117 ro
resolve /run/kern/boxes/t/root /dev dir
mount_at tmpfs fd118
resolve /run/kern/boxes/t/root /dev/null file
bind /dev/null fd119
resolve /run/kern/boxes/t/root /dev/zero file
bind /dev/zero fd120
resolve /run/kern/boxes/t/root /dev/full file
bind /dev/full fd121
resolve /run/kern/boxes/t/root /dev/random file
bind /dev/random fd122
resolve /run/kern/boxes/t/root /dev/urandom file
bind /dev/urandom fd123
resolve /run/kern/boxes/t/root /dev/tty file
bind /dev/tty fd124
resolve /run/kern/boxes/t/root /dev/pts dir
mount_at devpts fd125
resolve /run/kern/boxes/t/root /dev
symlink ptmx -> pts/ptmx
resolve /run/kern/boxes/t/root /dev
symlink fd -> /proc/self/fd
symlink stdin -> /proc/self/fd/0
symlink stdout -> /proc/self/fd/1
symlink stderr -> /proc/self/fd/2
resolve /run/kern/boxes/t/root /dev/shm dir
mount_at tmpfs fd128
resolve /run/kern/boxes/t/root /sys dir
mount_at sysfs fd129
resolve /run/kern/boxes/t/root /tmp dir
mount_at tmpfs fd130
pivot /run/kern/boxes/t/root
)";
  auto plan = build_mount_plan(base_spec());
  std::vector<int> none;
  MountContext ctx{"/run/kern/boxes/t", &none, &none};
  RecordingOps ops;
  MountFailure f;
  ASSERT_TRUE(execute_mount_plan(plan, ctx, ops, &f));
  std::vector<std::string> want;
  for (size_t pos = 0, end; pos < kGolden.size(); pos = end + 1) {
    end = kGolden.find('\n', pos);
    if (end > pos) want.push_back(kGolden.substr(pos, end - pos));
  }
  EXPECT_EQ(ops.calls, want);
}

}  // namespace
}  // namespace kern
